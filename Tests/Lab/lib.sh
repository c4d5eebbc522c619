#!/bin/bash
# Shared helpers of the lab suites (Tests/Lab/e2e.sh, faults.sh, senders.sh); sourced, not run.
# The sourcing script sets SUITE (log folder prefix, message prefix) and GROUP first. Provides: the
# work folder $W (tmpfs, removed on exit; logs copied to $BLESEND_LAB_OUT/$SUITE-$GROUP), case
# bookkeeping (begin/check/fail/end, "ok - name" / "not ok - name" lines), bounded waits, --json
# log readers (blesend-labcheck events; builtins-only ones for polling), the exit statuses as EXIT_*
# variables (blesend-labcheck exit-codes: ExitStatus's cases; the suites type no numbers), keys
# (sender, receiver, stranger, other; the sender trusted), start_recv/stop_recv (blerecv on hci0)
# and send_run (blesend on hci1), blerecv --ask under a scripted terminal (start_ask_recv,
# answer_prompt). A suite may define suite_cleanup, run on exit.
SUITE=${SUITE:-e2e}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BIN=${BLESEND_BIN:-$ROOT/.build/debug}
SEND=$BIN/blesend
RECV=$BIN/blerecv
LABCHECK=$BIN/blesend-labcheck
PEER_DEV=/org/bluez/hci1/dev_00_AA_01_00_00_00
SEND_TIMEOUT=${E2E_SEND_TIMEOUT:-150}   # seconds one blesend run may take before we kill it

[ "${BLESEND_LAB_BT:-}" = 1 ] || { echo "$SUITE: run me in the lab VM: lab/run-suite.sh -- $0" >&2; exit 2; }
for b in "$SEND" "$RECV" "$LABCHECK"; do
  [ -x "$b" ] || { echo "$SUITE: $b missing; run swift build on the host first" >&2; exit 2; }
done

# Everything lives in a tmpfs folder (the guest's /run), removed on exit.
W=$(mktemp -d "/run/blesend-$SUITE.XXXXXX")
PASS=0
FAIL=0
PIDS=()
cleanup() {
  local p
  declare -F suite_cleanup > /dev/null && suite_cleanup
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  sleep 0.5
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
  if [ -n "${BLESEND_LAB_OUT:-}" ] && [ -d "$BLESEND_LAB_OUT" ]; then
    mkdir -p "$BLESEND_LAB_OUT/$SUITE-$GROUP" && cp -r "$W"/logs "$BLESEND_LAB_OUT/$SUITE-$GROUP/" 2>/dev/null
  fi
  rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$W/keys" "$W/trust" "$W/files" "$W/logs"

# nap SECONDS: waits without starting a process. Under TCG each fork and exec costs the guest's one
# CPU about 0.1 s (issue 30: 100 x `sleep 0.1` took 24.6 s, 11.7 s of it CPU), so a wait loop
# around `sleep 0.1` took half the CPU from the programs under test. `read -t` on a FIFO nobody
# writes waits inside the shell (the FIFO is opened read-write once, so the open never blocks).
mkfifo "$W/nap"
exec {NAP_FD}<> "$W/nap"
nap() { read -rt "$1" -u "$NAP_FD" _ || true; }

# The exit statuses, from the code (ExitStatus): EXIT_SUCCESS=0, EXIT_PEER_REFUSED=66, ...
"$LABCHECK" exit-codes > "$W/exit-codes.sh" || { echo "$SUITE: $LABCHECK exit-codes failed" >&2; exit 2; }
# shellcheck source=/dev/null
source "$W/exit-codes.sh"
[ -n "${EXIT_PEER_REFUSED:-}" ] || { echo "$SUITE: no EXIT_PEER_REFUSED in $W/exit-codes.sh" >&2; exit 2; }

T0=$(date +%s.%N)
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
log() { echo "# [$(elapsed "$T0")s] $*"; }

CASE=""
CASE_T=""
ERRS=()
begin() { CASE=$1; CASE_T=$(now); ERRS=(); log "case: $CASE"; }
check() {   # check "what" command... : records a failure message unless the command succeeds
  local what=$1; shift
  if ! "$@"; then ERRS+=("$what"); fi
}
fail() { ERRS+=("$*"); }
# show_logs LINES LOG...: each LOG that is not empty, under its name, indented: its last LINES lines
# ("all": the whole of it).
show_logs() {
  local n=$1 f; shift
  for f in "$@"; do
    [ -s "$f" ] || continue
    if [ "$n" = all ]; then echo "#   --- $(basename "$f")"; sed 's/^/#   | /' "$f"
    else echo "#   --- $(basename "$f") (last $n lines)"; tail -n "$n" "$f" | sed 's/^/#   | /'; fi
  done
}
# end [LOG...]: ok or not ok for the case; the LOGs' last 15 lines when it failed (the whole LOGs of
# a passing case with BLESEND_LAB_SHOW=1 in the environment: what a slow passing case did).
end() {
  local t; t=$(elapsed "$CASE_T")
  if [ ${#ERRS[@]} -eq 0 ]; then
    echo "ok - $CASE (${t}s)"
    PASS=$((PASS + 1))
    [ -z "${BLESEND_LAB_SHOW:-}" ] || show_logs all "$@"
  else
    echo "not ok - $CASE (${t}s)"
    local e
    for e in "${ERRS[@]}"; do echo "#   $e"; done
    show_logs 15 "$@"
    FAIL=$((FAIL + 1))
  fi
}

# json_logs_case: a suite's last case (issue 34): every event line of the suite's --json logs
# ($W/logs/*.out and *.json: the tools' own, those whose lines start with {"event":"; the Python
# helpers' logs are left out) matches docs/json-events.schema.json (blesend-labcheck schema).
json_logs_case() {
  begin "every --json event line the suite wrote matches docs/json-events.schema.json"
  local report=$W/logs/schema-check.txt
  "$LABCHECK" schema "$ROOT/docs/json-events.schema.json" "$W"/logs/*.out "$W"/logs/*.json > "$report" 2>&1 \
    || fail "lines that do not match the schema (below)"
  log "$(tail -n 1 "$report")"
  end "$report"
}

# wait_until SECONDS [--pid PID] COMMAND...: runs COMMAND every 0.2 s until it succeeds (0) or
# SECONDS pass (1). With --pid, gives up early, after one last try, once PID has exited.
wait_until() {
  local deadline=$((SECONDS + $1)) pid=""
  shift
  if [ "$1" = --pid ]; then pid=$2; shift 2; fi
  while [ "$SECONDS" -lt "$deadline" ]; do
    "$@" && return 0
    if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then "$@"; return; fi
    nap 0.2
  done
  return 1
}

# lines_at_least FILE REGEX N: FILE has N or more lines matching REGEX.
# no_links hciN: the adapter holds no connection
no_links() { [ -z "$(hcitool -i "$1" con 2>/dev/null | tail -n +2)" ]; }
# cut_noticed_or_refused SENDLOG BUSCTLOUT: blesend rescans after a cut, or busctl reported a failure
cut_noticed_or_refused() { lines_at_least "$1" '"event":"scanning"' 2 || grep -q 'rc [1-9]' "$2" 2>/dev/null; }
lines_at_least() { [ "$(grep -cE -- "$2" "$1" 2>/dev/null)" -ge "$3" ]; }
# Wait (bounded) until a file contains a pattern. wait_for FILE REGEX SECONDS [PID]
wait_for() { wait_until "$3" ${4:+--pid "$4"} file_has "$1" "$2"; }

# count_event FILE EVENT: how many EVENT lines a --json log has (builtins only)
count_event() {
  local l n=0
  [ -f "$1" ] || { echo 0; return; }
  while IFS= read -r l; do [[ $l == *"\"event\":\"$2\""* ]] && n=$((n + 1)); done < "$1"
  echo "$n"
}
# max_progress FILE: the largest "bytes" of the progress events in a --json log (builtins only)
max_progress() {
  local l b=0 re='"event":"progress",.*"bytes":([0-9]+)'
  [ -f "$1" ] || { echo 0; return; }
  while IFS= read -r l; do [[ $l =~ $re ]] && [ "${BASH_REMATCH[1]}" -gt "$b" ] && b=${BASH_REMATCH[1]}; done < "$1"
  echo "$b"
}
# wait_for2 FILE1 REGEX1 FILE2 REGEX2 SECONDS PID: either file matches (polls with builtins only).
file_has() { local l; [ -f "$1" ] || return 1; while IFS= read -r l || [ -n "$l" ]; do [[ $l =~ $2 ]] && return 0; done < "$1"; return 1; }
either_file_has() { file_has "$1" "$2" || file_has "$3" "$4"; }
wait_for2() { wait_until "$5" --pid "$6" either_file_has "$1" "$2" "$3" "$4"; }

# Wait (bounded) for a background child of this shell; sets WRC to its exit status (124 after the
# deadline: killed). Not for $(...): a subshell cannot wait for its parent's children.
WRC=0
wait_pid() {
  local pid=$1 limit=$2 i=0
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$i" -ge $((limit * 10)) ]; then
      kill "$pid" 2>/dev/null; sleep 1; kill -9 "$pid" 2>/dev/null
      wait "$pid" 2>/dev/null
      WRC=124
      return
    fi
    nap 0.1
    i=$((i + 1))
  done
  WRC=0
  wait "$pid" 2>/dev/null || WRC=$?
}

# events FILE QUERY...: blesend-labcheck's queries on a --json log (Sources/Tools/blesend-labcheck/Events.swift):
# valid, count EVENT, first|last|all EVENT KEY, has EVENT [KEY=VALUE|KEY~TEXT|KEY]...
events() { "$LABCHECK" events "$@"; }
valid_json() { events "$1" valid; }   # every line of FILE is JSON
# json_get FILE EVENT KEY: KEY of the first EVENT line ("" if none)
json_get() { events "$1" first "$2" "$3"; }
has_event() { grep -q "\"event\":\"$2\"" "$1" 2>/dev/null || grep -q "\"event\": \"$2\"" "$1" 2>/dev/null; }
same() { cmp -s "$1" "$2"; }
absent() { [ ! -e "$1" ]; }
lacks() { ! grep -qE -- "$2" "$1" 2>/dev/null; }   # lacks FILE REGEX
# transports FILE: the transport of every "connected" event in a --json log, space-separated
transports() { events "$1" all connected transport | tr '\n' ' ' | sed 's/ $//'; }
# stale_receiver_link: after the sender's link (hci1) was cut, whether the receiver's controller
# (hci0) still lists a link once hci1 lists none (btvirt sometimes drops the peer's Disconnection
# Complete; a radio would end that link by supervision timeout). Prints hci0's links if so.
stale_receiver_link() {
  local links0
  wait_until 3 bash -c '! hcitool -i hci1 con | grep -q handle' || return 0
  sleep 0.3
  hcitool -i hci1 con | grep -q handle && return 0   # the sender is on a new link already
  links0=$(hcitool -i hci0 con | grep handle | tr -s ' \t' ' ')
  [ -n "$links0" ] && echo "$links0"
  return 0
}
# fallbacks FILE: why each GATT connection of a --json log did not get its L2CAP channel ("why" "why" ...)
fallbacks() { events "$1" all connected l2cap_fallback | sed 's/.*/"&" /' | tr -d '\n'; }
# l2cap_or_explained FILE: every connection on L2CAP, or the GATT ones say why L2CAP failed
l2cap_or_explained() { all_l2cap "$1" || events "$1" has connected l2cap_fallback; }
all_l2cap() { local t; t=$(transports "$1"); [ -n "$t" ] && [ -z "$(echo "$t" | tr ' ' '\n' | grep -v '^l2cap$')" ]; }
small_mtu() { [ -n "$1" ] && [ "$1" -le 64 ]; }
hidden_files() { find "$1" -mindepth 1 -name '.*' | grep -q . && return 1; return 0; }

# ---- keys ----
"$SEND" keygen -o "$W/keys/sender" > /dev/null 2> "$W/logs/keygen.err" || { cat "$W/logs/keygen.err"; exit 2; }
"$SEND" keygen -o "$W/keys/receiver" > /dev/null 2>> "$W/logs/keygen.err" || exit 2
"$SEND" keygen -o "$W/keys/stranger" > /dev/null 2>> "$W/logs/keygen.err" || exit 2
"$SEND" keygen -o "$W/keys/other" > /dev/null 2>> "$W/logs/keygen.err" || exit 2
"$RECV" trust "$W/keys/sender.pub" --name sender --dir "$W/trust" > /dev/null 2>> "$W/logs/keygen.err" || exit 2
RPUB=$W/keys/receiver.pub

mkfile() { head -c "$2" /dev/urandom > "$W/files/$1"; }

# ---- receiver helpers ----
RECV_PID=""
RECV_OUT=""
RECV_LOG=""
# start_recv NAME OUTDIR [blerecv args...]: background receiver on hci0, waits for its listening line.
# Its trust folder is $RECV_TRUST (default $W/trust). On btvirt's controllers, which give every
# link of a controller one handle and so cannot hold two (lab/README.md, "Two links on one
# controller"), blerecv runs with --one-link: its spare advertisements let a second central
# connect beside the first, and on trixie the links that left behind kept the next case's
# sender from finding the receiver (faults.sh, 2026-11-27). bumble's controllers take them.
# Every blerecv the suites start takes ${RECV_LINKS[@]}.
RECV_LINKS=()
[ "${BT_CONTROLLERS:-btvirt}" = bumble ] || RECV_LINKS=(--one-link)
start_recv() {
  local name=$1 out=$2; shift 2
  mkdir -p "$out"
  RECV_OUT=$out
  RECV_LOG=$W/logs/recv-$name
  : > "$RECV_LOG.out"; : > "$RECV_LOG.err"   # (the child's redirection may truncate only after we look)
  "$RECV" --adapter hci0 --trust "${RECV_TRUST:-$W/trust}" --key "$W/keys/receiver" --out "$out" "${RECV_LINKS[@]}" "$@" \
    > "$RECV_LOG.out" 2> "$RECV_LOG.err" &
  RECV_PID=$!
  PIDS+=("$RECV_PID")
  if ! wait_for2 "$RECV_LOG.out" '"listening"' "$RECV_LOG.err" 'waiting for senders' 30 "$RECV_PID"; then
    echo "# receiver $name did not start:"; sed 's/^/#   | /' "$RECV_LOG.err" | tail -n 20
    return 1
  fi
}
stop_recv() {
  [ -n "$RECV_PID" ] || return 0
  kill "$RECV_PID" 2>/dev/null
  wait_pid "$RECV_PID" 10
  RECV_PID=""
}
# send_run NAME [blesend args...]: runs blesend on hci1 in the foreground (bounded); sets SRC, SLOG.
# $BLESEND_LAB_SEND_ARGS adds options to every such run (e.g. -vv to see which call failed).
SLOG=""
SRC=0
SEND_SECS=0
send_run() {
  local name=$1; shift
  SLOG=$W/logs/send-$name
  local t; t=$(now)
  SRC=0
  # shellcheck disable=SC2086  # BLESEND_LAB_SEND_ARGS (e.g. -vv) is a word list on purpose
  timeout -k 5 "$SEND_TIMEOUT" "$SEND" --adapter hci1 --key "$W/keys/sender" --timeout 40 ${BLESEND_LAB_SEND_ARGS:-} "$@" > "$SLOG.out" 2> "$SLOG.err" || SRC=$?
  SEND_SECS=$(elapsed "$t")
  log "blesend $name: exit $SRC after ${SEND_SECS}s"
}

# send_bg NAME [blesend args...]: blesend on hci1 in the background; sets SPID, SLOG, SEND_T.
SPID=""
SEND_T=""
send_bg() {
  local name=$1; shift
  SLOG=$W/logs/send-$name
  SEND_T=$(now)
  : > "$SLOG.out"; : > "$SLOG.err"
  "$SEND" --adapter hci1 --key "$W/keys/sender" --timeout 40 "$@" > "$SLOG.out" 2> "$SLOG.err" &
  SPID=$!
  PIDS+=("$SPID")
}
# finish_send LIMIT: waits for the background blesend; sets SRC, SEND_SECS.
finish_send() {
  wait_pid "$SPID" "$1"; SRC=$WRC
  SEND_SECS=$(elapsed "$SEND_T")
  log "blesend $(basename "$SLOG" | sed 's/^send-//'): exit $SRC after ${SEND_SECS}s"
}
# wait_progress FILE BYTES SECONDS PID: until the --json log acknowledges BYTES (bounded).
progress_at_least() { [ "$(max_progress "$1")" -ge "$2" ]; }
wait_progress() { wait_until "$3" --pid "$4" progress_at_least "$1" "$2"; }
# wait_count FILE EVENT N SECONDS: until the --json log has N EVENT lines (bounded).
count_at_least() { [ "$(count_event "$1" "$2")" -ge "$3" ]; }
wait_count() { wait_until "$4" count_at_least "$1" "$2" "$3"; }
# wait_lines FILE REGEX N SECONDS: until FILE has N lines matching REGEX (bounded).
wait_lines() { wait_until "$4" lines_at_least "$1" "$2" "$3"; }
goodput() {   # bytes seconds -> KiB/s
  awk -v b="$1" -v s="$2" 'BEGIN { if (s > 0) printf "%.1f", b / 1024 / s; else print "inf" }'
}

# First contact (issue 14 part 2): blerecv --ask runs in a pty made by util-linux script(1) (in
# bsdutils, essential on both images); what the user types goes through a FIFO we write into once
# the prompt shows in its output. ASK_FD keeps the FIFO open so script sees no end of input.
ASK_FD=""
start_ask_recv() {   # start_ask_recv NAME OUTDIR TRUSTDIR
  local name=$1 out=$2 trust=$3
  mkdir -p "$out" "$trust"
  RECV_OUT=$out
  RECV_LOG=$W/logs/recv-$name
  : > "$RECV_LOG.out"; : > "$RECV_LOG.err"
  rm -f "$W/ask.fifo"; mkfifo "$W/ask.fifo"
  script -qfec "$RECV --adapter hci0 --trust $trust --key $W/keys/receiver --out $out --ask -v ${RECV_LINKS[*]}" /dev/null \
    < "$W/ask.fifo" > "$RECV_LOG.err" 2>&1 &
  RECV_PID=$!
  PIDS+=("$RECV_PID")
  exec {ASK_FD}> "$W/ask.fifo"
  wait_for "$RECV_LOG.err" 'waiting for senders' 30 "$RECV_PID"
}
stop_ask_recv() {
  # blerecv first (SIGTERM: it unregisters from bluetoothd), then script(1) and the FIFO.
  [ -n "$RECV_PID" ] && pkill -TERM -P "$RECV_PID" 2>/dev/null
  [ -n "$ASK_FD" ] && exec {ASK_FD}>&-
  ASK_FD=""
  stop_recv
}
# code_in FILE: the last "ddd ddd" first contact code blesend printed in FILE (its stderr line
# "Code: ddd ddd", or the "code" of its --json first-contact event); blerecv never shows it.
code_in() { grep -oE '(Code: |"code":")[0-9]{3} [0-9]{3}' "$1" 2>/dev/null | tail -n 1 | grep -oE '[0-9]{3} [0-9]{3}'; }
has_code() { [ -n "$(code_in "$1")" ]; }
# other_code CODE: CODE with its last digit changed (what a user reading another screen would type)
other_code() { local c=$1 d=${1: -1}; echo "${c%?}$(( (d + 1) % 10 ))"; }
# answer_prompt N SENDER_LOG right|wrong [NAME...]: waits for the Nth "type the 6-digit code" question
# on blerecv's terminal and for the code blesend printed in SENDER_LOG, then types that code (right:
# without its space, which must not matter) or another one (wrong), then each NAME once the name
# question it answers shows up. Sets CODE_SHOWN=1 if blerecv's terminal held the code before it was
# typed (it must not: the user has to read it off the sender). The prompt flushes pending input
# before it prints each question, so typing only after the question shows is what a person does.
CODE_SHOWN=0
answer_prompt() {
  local n=$1 slog=$2 how=$3 code typed names=0 a
  shift 3
  wait_until 40 --pid "$RECV_PID" lines_at_least "$RECV_LOG.err" 'type the 6-digit code' "$n" || return 1
  wait_until 10 has_code "$slog" || return 1
  code=$(code_in "$slog")
  CODE_SHOWN=0
  if grep -qF -e "$code" -e "${code// /}" "$RECV_LOG.err"; then CODE_SHOWN=1; fi
  if [ "$how" = right ]; then typed=${code// /}; else typed=$(other_code "$code"); fi
  printf '%s\n' "$typed" >&"$ASK_FD"
  for a in "$@"; do
    names=$((names + 1))
    wait_until 10 --pid "$RECV_PID" lines_at_least "$RECV_LOG.err" 'name for this key' "$names" || return 1
    printf '%s\n' "$a" >&"$ASK_FD"
  done
}

LABLOG=/run/blesend-lab   # bt-up.sh's logs and pid files
powered() { [ "$(busctl --system get-property org.bluez "/org/bluez/$1" org.bluez.Adapter1 Powered 2>/dev/null)" = "b true" ]; }
wait_powered() { wait_until "$2" powered "$1"; }   # wait_powered hciN SECONDS
# restart_bluetoothd: stops the one bluetoothd (both adapters) and starts it again with the same
# command line bt-up.sh used; waits until hci0 and hci1 are powered again.
BTD_DOWN_S=""
restart_bluetoothd() {
  local pid t i
  pid=$(cat "$LABLOG/bluetoothd.pid" 2>/dev/null)
  [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || { log "no bluetoothd pid"; return 1; }
  local -a cmd
  mapfile -d '' cmd < "/proc/$pid/cmdline"
  t=$(now)
  kill "$pid"
  for i in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; nap 0.1; done
  kill -0 "$pid" 2>/dev/null && { kill -9 "$pid"; sleep 0.5; }
  echo "---- restarted by $SUITE.sh at $(elapsed "$T0")s" >> "$LABLOG/bluetoothd.log"
  "${cmd[@]}" >> "$LABLOG/bluetoothd.log" 2>&1 &
  echo $! > "$LABLOG/bluetoothd.pid"
  wait_powered hci0 30 && wait_powered hci1 30 || { log "adapters not powered after the restart"; return 1; }
  BTD_DOWN_S=$(elapsed "$t")
  log "bluetoothd restarted (${cmd[*]}); both adapters powered again after ${BTD_DOWN_S}s"
}

# proc_stats PID: "vmrss_kib vmhwm_kib rss_kib fds context_switches". VmRSS/VmHWM from
# /proc/PID/status; Rss from smaps_rollup (walks the page tables: exact, where VmRSS may lag by
# per-thread cached counts); context switches summed over all threads (shows the figures are live:
# the main thread of a Swift program sleeps while the work runs on others).
proc_stats() {
  local rss hwm srss fds cs
  rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null)
  hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$1/status" 2>/dev/null)
  srss=$(awk '/^Rss:/ { print $2 }' "/proc/$1/smaps_rollup" 2>/dev/null)
  cs=$(cat /proc/"$1"/task/*/status 2>/dev/null | awk '/ctxt_switches:/ { n += $2 } END { print n }')
  fds=$(find "/proc/$1/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
  echo "${rss:-0} ${hwm:-0} ${srss:-0} $fds ${cs:-0}"
}

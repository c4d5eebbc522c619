#!/bin/bash
# blesend end-to-end suite: the REAL blesend/blerecv binaries over real BlueZ, in the lab VM.
#
# Usage (host):  lab/run-suite.sh -- Tests/Lab/e2e.sh [main|mtu|all|discovery|first-contact]
#   main  (default) every case except the forced-small-MTU one; needs the default main.conf
#   mtu   only the small-MTU case; boot with BT_MAINCONF='[GATT]\nExchangeMTU=48' (below 48 bluetoothd 5.66
#         cannot create its GATT database: setsockopt(L2CAP_OPTIONS) EINVAL, the adapters never come up)
#   all   both groups in one boot (MTU case then only checks the file, not that the MTU is small)
#   discovery  private discovery with two receivers, then two ordinary receivers; boot with
#              BTVIRT_ARGS='-L -l3' BT_NCTRL=3 (receivers: only the ordinary ones)
#   busy  a busy receiver and a second sender (three controllers too). NOT in CI: it fails in this
#         lab because btvirt cannot give one controller two links (lab/README.md, "Two links on
#         one controller"); it is the reproducer, and the acceptance case once the lab can.
#   first-contact  only the blerecv --ask case (also part of main)
#   pairing  only the pairing cases (also part of discovery; three controllers: the relay is on hci2)
#   cut   only the link-cut-and-resume case (also part of main), E2E_REPEAT times (default 3)
# Runs inside the VM after bt-up.sh (BLESEND_LAB_BT=1): receiver blerecv on hci0 (00:AA:01:00:00:00),
# sender blesend on hci1. Binaries: $BLESEND_BIN (default .build/debug). Prints "ok - name" /
# "not ok - name" per case, then "N passed, M failed"; exit status 1 if M > 0, 2 on setup errors.
# The LAST main-group case stops bluetoothd (its EXIT_BLUETOOTH_UNAVAILABLE check), so nothing BlueZ-related can follow.
set -uo pipefail

GROUP=${1:-main}
SUITE=e2e
# shellcheck source=Tests/Lab/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

mkfile zero.bin 0
mkfile one.bin 1
mkfile k100.bin $((100 * 1024))
mkfile g.bin $((100 * 1024))
mkfile m1.bin $((1024 * 1024))
mkfile m4.bin $((4 * 1024 * 1024))   # the cut case: long enough to cut mid-file over L2CAP too
mkfile k20.bin $((20 * 1024))
mkfile k30.bin $((30 * 1024))
mkfile s.bin $((50 * 1024))
printf 'hello a.txt\n' > "$W/files/a.txt"

# The long-running receiver shared by several cases (also proves it re-advertises after each sender).
MAIN_OUT=$W/out-main
ensure_main_recv() {
  if [ -n "$RECV_PID" ] && [ "$RECV_LOG" = "$W/logs/recv-main" ] && kill -0 "$RECV_PID" 2>/dev/null; then return 0; fi
  [ -n "$RECV_PID" ] && [ "$RECV_LOG" = "$W/logs/recv-main" ] && log "main receiver died; restarting (see earlier failure)"
  stop_recv
  start_recv main "$MAIN_OUT" -v
}

# First contact: start_ask_recv and answer_prompt live in lib.sh (senders.sh asks too).
run_first_contact() {
  begin "first contact: blerecv --ask, answered by a scripted TTY that types the code blesend shows, adds the key and the file arrives; another code typed: blesend exits $EXIT_PEER_REFUSED, the trust dir is unchanged, and the same sender is then refused without a question"
  local out=$W/out-ask trust=$W/trust-ask pid t
  if ! start_ask_recv ask "$out" "$trust"; then
    fail "blerecv --ask did not start under script(1)"
    end "$RECV_LOG.err"
    stop_ask_recv
    return
  fi
  # The code typed: the stranger's key is added under the name typed, and its file arrives.
  SLOG=$W/logs/send-ask-yes
  t=$(now)
  "$SEND" --adapter hci1 --key "$W/keys/stranger" --timeout 40 --json --to "$RPUB" "$W/files/k20.bin" > "$SLOG.out" 2> "$SLOG.err" &
  pid=$!
  PIDS+=("$pid")
  answer_prompt 1 "$SLOG.out" right newfriend || fail "no code question, no code from blesend, or no name question on blerecv's terminal"
  check "blerecv showed the first contact code before it was typed" [ "$CODE_SHOWN" = 0 ]
  wait_pid "$pid" 60; SRC=$WRC
  log "blesend ask-yes: exit $SRC after $(elapsed "$t")s"
  check "blesend exit $SRC, want $EXIT_SUCCESS" [ "$SRC" = "$EXIT_SUCCESS" ]
  check "k20.bin differs or missing" same "$W/files/k20.bin" "$out/k20.bin"
  check "the stranger's key is not in the trust dir as newfriend.pub" grep -qF "$(grep -v '^#' "$W/keys/stranger.pub" | head -n 1)" "$trust/newfriend.pub"
  # Another code typed (as from another device's screen): blesend exits EXIT_PEER_REFUSED with the first contact
  # error, nothing is written.
  local before after
  before=$(ls -A "$trust" | sort)
  SLOG=$W/logs/send-ask-no
  "$SEND" --adapter hci1 --key "$W/keys/other" --timeout 40 --to "$RPUB" "$W/files/k30.bin" > "$SLOG.out" 2> "$SLOG.err" &
  pid=$!
  PIDS+=("$pid")
  answer_prompt 2 "$SLOG.err" wrong || fail "no second code question on blerecv's terminal, or no code from blesend"
  check "blerecv showed the second code before it was typed" [ "$CODE_SHOWN" = 0 ]
  wait_pid "$pid" 60; SRC=$WRC
  check "blesend (another code typed) exit $SRC, want $EXIT_PEER_REFUSED" [ "$SRC" = "$EXIT_PEER_REFUSED" ]
  check "blesend does not say the receiver's user did not accept it" grep -q "did not accept your key" "$SLOG.err"
  check "blerecv did not say the code typed is not this connection's" grep -q "not the code of this connection" "$RECV_LOG.err"
  after=$(ls -A "$trust" | sort)
  check "trust dir changed after a wrong code: $(diff <(echo "$before") <(echo "$after") | tr '\n' ' ')" [ "$before" = "$after" ]
  check "k30.bin arrived although the code typed was wrong" [ ! -e "$out/k30.bin" ]
  check "a hidden file is in the out dir" hidden_files "$out"
  # The same sender again at once: refused without a question (paused 30 s after a refusal).
  SLOG=$W/logs/send-ask-again
  "$SEND" --adapter hci1 --key "$W/keys/other" --timeout 40 --to "$RPUB" "$W/files/k30.bin" > "$SLOG.out" 2> "$SLOG.err" &
  pid=$!
  PIDS+=("$pid")
  wait_pid "$pid" 60; SRC=$WRC
  check "blesend (refused shortly before) exit $SRC, want $EXIT_PEER_REFUSED" [ "$SRC" = "$EXIT_PEER_REFUSED" ]
  check "blerecv asked again about a sender it refused shortly before" [ "$(grep -c 'type the 6-digit code' "$RECV_LOG.err")" = 2 ]
  check "blerecv did not say it refused the sender without asking" grep -q "without asking" "$RECV_LOG.err"
  check "k30.bin arrived from a paused sender" [ ! -e "$out/k30.bin" ]
  end "$SLOG.err" "$RECV_LOG.err"
  stop_ask_recv
}

# =====================================================================================
# The link cut from outside mid-transfer, then the resume (part of main; the group "cut" runs it
# E2E_REPEAT times, default 3, to chase a rare failure).
run_cut() {
  begin "link cut mid-transfer (Device1.Disconnect from another process), blesend resumes on L2CAP, file identical"
  ensure_main_recv
  rm -f "$MAIN_OUT/m4.bin"
  CUT_RUNS=$((${CUT_RUNS:-0} + 1))
  SLOG=$W/logs/send-cut$CUT_RUNS
  : > "$W/logs/busctl.out"
  local t pid i cut=0 progress_bytes="" stale=""
  CUT_HOW=none
  t=$(now)
  "$SEND" -v --adapter hci1 --key "$W/keys/sender" --timeout 40 --json --to "$RPUB" "$W/files/m4.bin" > "$SLOG.out" 2> "$SLOG.err" &
  pid=$!
  PIDS+=("$pid")
  # wait until some file bytes were acknowledged, then cut the link
  for i in $(seq 1 300); do
    progress_bytes=$(max_progress "$SLOG.out")
    if [ "${progress_bytes:-0}" -ge 32768 ]; then
      local handle
      handle=$(hcitool -i hci1 con 2>/dev/null | sed -n 's/.*handle \([0-9][0-9]*\).*/\1/p' | head -n 1)
      log "cutting the link (handle $handle) at $progress_bytes acknowledged bytes: busctl Device1.Disconnect"
      if [ "${E2E_CUT_VIA:-}" != hci ]; then
        ( busctl --system call org.bluez "$PEER_DEV" org.bluez.Device1 Disconnect > "$W/logs/busctl.out" 2>&1
          echo "rc $? at $(elapsed "$T0")s" >> "$W/logs/busctl.out" ) &
        PIDS+=("$!")
      fi
      # BlueZ 5.66 in the lab defers Device1.Disconnect while traffic flows (see report); if the
      # link is still up after 3 s, cut it one layer lower: HCI LE Disconnect from another process.
      # bluetoothd may also refuse it at once (EIO while it is busy with the link): then go lower at once.
      # E2E_CUT_VIA=hci: straight to HCI LE Disconnect (to chase what follows that cut).
      if [ "${E2E_CUT_VIA:-}" != hci ] && wait_until 3 cut_noticed_or_refused "$SLOG.out" "$W/logs/busctl.out" && lines_at_least "$SLOG.out" '"event":"scanning"' 2; then
        cut=1; CUT_HOW="Device1.Disconnect"
      elif [ -n "$handle" ] && { ! hcitool -i hci1 con | grep -q "handle $handle " || lines_at_least "$SLOG.out" '"event":"scanning"' 2; }; then
        # The link ended just after the wait: never cut again, the sender may be on a new link soon.
        cut=1; CUT_HOW="Device1.Disconnect (late)"
      else
        log "blesend still on the link after Device1.Disconnect ($(tr '\n' ' ' < "$W/logs/busctl.out" 2>/dev/null)); hcitool -i hci1 ledc '$handle'"
        if [ -n "$handle" ] && hcitool -i hci1 ledc "$handle" >> "$W/logs/busctl.out" 2>&1; then
          cut=1; CUT_HOW="HCI LE Disconnect (Device1.Disconnect had no effect)"
        fi
      fi
      [ "$cut" = 1 ] && stale=$(stale_receiver_link)
      break
    fi
    kill -0 "$pid" 2>/dev/null || break
    nap 0.2
  done
  wait_pid "$pid" "$SEND_TIMEOUT"; SRC=$WRC
  SEND_SECS=$(elapsed "$t")
  log "blesend cut: exit $SRC after ${SEND_SECS}s"
  # Device1.Disconnect can take effect only after the 3 s above (the HCI disconnect then fails: no link).
  if [ "$cut" = 0 ] && lines_at_least "$SLOG.out" '"event":"scanning"' 2; then cut=1; CUT_HOW="Device1.Disconnect (late)"; fi
  check "never cut the link (progress $progress_bytes; $(cat "$W/logs/busctl.out" 2>/dev/null))" [ "$cut" = 1 ]
  check "blesend exit $SRC, want $EXIT_SUCCESS" [ "$SRC" = "$EXIT_SUCCESS" ]
  check "m4.bin differs or missing" same "$W/files/m4.bin" "$MAIN_OUT/m4.bin"
  check "no resumed event" has_event "$SLOG.out" resumed
  check "want 2+ connected events" [ "$(events "$SLOG.out" count connected)" -ge 2 ]
  if [ -n "$stale" ]; then
    # btvirt did not tell the receiver's controller that the link ended ($stale): its kernel kept
    # the old link, L2CAP channels and all, and refuses a new channel whose CID the old one holds
    # ("source CID already allocated"). A radio's supervision timeout (420 ms) ends such a link
    # before a sender can connect again; here only GATT is open to the sender, as designed.
    log "the receiver's controller kept the old link ($stale): GATT accepted after an L2CAP refusal"
    check "connected over '$(transports "$SLOG.out")' without saying why L2CAP failed" l2cap_or_explained "$SLOG.out"
  else
    check "connections over '$(transports "$SLOG.out")', want l2cap each time (L2CAP failed: $(fallbacks "$SLOG.out"))" all_l2cap "$SLOG.out"
  fi
  check "stdout has a line that is not JSON" valid_json "$SLOG.out"
  log "cut by $CUT_HOW; resumed at offset $(json_get "$SLOG.out" resumed offset); busctl: $(tr '\n' ' ' < "$W/logs/busctl.out")"
  echo "# METRIC cut_how='$CUT_HOW' resumed_offset=$(json_get "$SLOG.out" resumed offset) cut_total_s=$SEND_SECS"
  check "a hidden file is in the out dir" hidden_files "$MAIN_OUT"
  end "$SLOG.err" "$SLOG.out" "$RECV_LOG.err"
  stop_recv
}

# =====================================================================================
# The main group: one line per case (MAIN_CASES, below), run in order by run_main. Most cases are
# one blesend run with the same frame: what to do first (start a receiver, make files), blesend's
# arguments, the exit status it must give, then checks. A case that needs more than that is a
# function of its own, named in the table with @.

# ---- what a row's BEFORE column runs ----
make_multi() {
  mkdir -p "$W/files/multi"
  head -c 4097 /dev/urandom > "$W/files/multi/m-a.bin"
  head -c 0 /dev/urandom > "$W/files/multi/m-b.bin"
  head -c 30000 /dev/urandom > "$W/files/multi/m-c.bin"
}
# The trust directory of the running receiver changes (issue 23: trust changes live).
trust_other() { "$RECV" trust "$W/keys/other.pub" --name other --dir "$W/trust" > /dev/null; }
untrust_other() { rm -f "$W/trust/other.pub"; }
make_text() {   # 1 MiB of our own sources and docs: compressible text
  # The whole corpus first, then its first MiB (a pipe into head would end cat with SIGPIPE, noise in the log).
  find Sources docs -type f \( -name '*.swift' -o -name '*.md' \) | sort | xargs cat > "$W/files/corpus.txt"
  head -c 1048576 "$W/files/corpus.txt" > "$W/files/text.txt"
  rm -f "$W/files/corpus.txt"
}
make_tree() {   # a folder: nested subfolders, an empty one, an executable file, 200 small files, a symlink
  local i d
  mkdir -p "$W/files/tree/a/b/c" "$W/files/tree/empty" "$W/files/tree/d"
  for i in $(seq -w 1 200); do
    case $((10#$i % 3)) in 0) d=a;; 1) d=a/b/c;; *) d=d;; esac
    head -c $((512 + 10#$i * 5)) /dev/urandom > "$W/files/tree/$d/s$i.bin"
  done
  printf '#!/bin/sh\necho hi\n' > "$W/files/tree/run.sh"; chmod 755 "$W/files/tree/run.sh"
  : > "$W/files/tree/zero.bin"
  ln -s /etc/passwd "$W/files/tree/link"
}
recv_nol2cap() { stop_recv; start_recv nol2cap "$W/out-nol2cap" --no-l2cap -v || fail "receiver --no-l2cap did not start"; }
recv_stdout() {   # blerecv --stdout into $W/out-stdout/out
  mkdir -p "$W/out-stdout"
  RECV_LOG=$W/logs/recv-stdout
  "$RECV" --adapter hci0 --trust "$W/trust" --key "$W/keys/receiver" --stdout -v "${RECV_LINKS[@]}" > "$W/out-stdout/out" 2> "$RECV_LOG.err" &
  RECV_PID=$!
  PIDS+=("$RECV_PID")
  wait_for "$RECV_LOG.err" 'waiting for senders' 30 "$RECV_PID" || fail "receiver did not start"
}
stop_bluetoothd() {
  local btpid i
  btpid=$(cat /run/blesend-lab/bluetoothd.pid 2>/dev/null)
  if [ -n "$btpid" ] && kill "$btpid" 2>/dev/null; then
    for i in $(seq 1 50); do kill -0 "$btpid" 2>/dev/null || break; nap 0.1; done
  else
    fail "could not stop bluetoothd (pid '$btpid')"
  fi
}

# ---- what a row's CHECKS column runs (each adds its message to the case's failures) ----
# arrived FILE [STORED [DIR]]: $W/files/FILE is in DIR (default $MAIN_OUT) as STORED (default its base name)
arrived() { local stored=${2:-$(basename "$1")}; check "$stored differs or missing" same "$W/files/$1" "${3:-$MAIN_OUT}/$stored"; }
json_ok() { check "${2:-stdout} has a line that is not JSON" valid_json "${1:-$SLOG.out}"; }   # json_ok [LOG [WHOSE]]
has_events() { local ev; for ev; do check "no $ev event" has_event "$SLOG.out" "$ev"; done; }
recv_has_events() { local ev; for ev; do check "receiver: no $ev event" has_event "$RECV_LOG.out" "$ev"; done; }
on_l2cap() { check "$1 over '$(transports "$SLOG.out")', want l2cap (L2CAP failed: $(fallbacks "$SLOG.out"))" all_l2cap "$SLOG.out"; }
on_gatt() { check "$1 connected over '$(transports "$SLOG.out")', want gatt" [ "$(transports "$SLOG.out")" = gatt ]; }
event_count() { check "$3" [ "$(events "$SLOG.out" count "$1")" = "$2" ]; }   # event_count EVENT N MESSAGE
event_has() { local what=$1; shift; check "$what" events "$SLOG.out" has "$@"; }   # event_has MESSAGE EVENT COND...
said() { check "$3" grep -q -- "$2" "$1"; }   # said FILE REGEX MESSAGE
no_hidden() { check "a hidden file is in the out dir" hidden_files "${1:-$MAIN_OUT}"; }
out_unchanged() {   # $MAIN_OUT holds what it held before blesend ran (MAIN_BEFORE)
  local after
  sleep 0.5
  after=$(ls -A "$MAIN_OUT" | sort)
  check "out dir changed: $(diff <(echo "$MAIN_BEFORE") <(echo "$after") | tr '\n' ' ')" [ "$MAIN_BEFORE" = "$after" ]
}
recv_exit() {   # recv_exit WHAT: the receiver (--once, --stdout) ends by itself with EXIT_SUCCESS
  local rrc
  wait_pid "$RECV_PID" 20; rrc=$WRC
  RECV_PID=""
  check "$1 exit $rrc, want $EXIT_SUCCESS" [ "$rrc" = "$EXIT_SUCCESS" ]
}
m1_metrics() {
  local fsecs mtu
  fsecs=$(json_get "$SLOG.out" file-done seconds)
  mtu=$(json_get "$SLOG.out" connected mtu)
  log "1 MiB: blesend wall ${SEND_SECS}s (incl. scan/connect/handshake), file ${fsecs}s, goodput $(goodput 1048576 "${fsecs:-0}") KiB/s file-only, $(goodput 1048576 "$SEND_SECS") KiB/s wall, ATT MTU ${mtu}"
  echo "# METRIC m1_wall_s=$SEND_SECS m1_file_s=$fsecs m1_kib_s=$(goodput 1048576 "${fsecs:-0}") mtu=$mtu"
}
text_compressed() {   # fewer bytes on the air than the 1 MiB text
  local air
  air=$(json_get "$SLOG.out" done air_bytes)
  check "air_bytes '$air' is not below the file's 1048576 bytes" [ "${air:-1048576}" -lt 1048576 ]
  log "text 1 MiB: ${air:-?} bytes on the air, blesend wall ${SEND_SECS}s"
  echo "# METRIC text_air_bytes=${air:-0} text_wall_s=$SEND_SECS"
}
tree_arrived() {   # the folder of make_tree, whole: the symlink left out, run.sh still executable
  check "received folder differs (diff -r, the symlink aside)" diff -r --no-dereference -x link "$W/files/tree" "$MAIN_OUT/tree"
  check "the symlink arrived" [ ! -e "$MAIN_OUT/tree/link" ]
  check "run.sh is not executable" [ -x "$MAIN_OUT/tree/run.sh" ]
}
# progress_lines LOG REGEX WHO: LOG (stderr, a file) has at least 5 lines matching REGEX, and no
# control code (issue 34: off a terminal, one plain line every 10 % or 30 s)
progress_lines() {
  local n
  n=$(grep -cE -- "$2" "$1")
  check "$3 wrote ${n:-0} progress lines to $(basename "$1"), want at least 5" [ "${n:-0}" -ge 5 ]
  check "$3 wrote a control code (a redrawn bar) to $(basename "$1")" lacks "$1" $'\r|\e\\['
}
folder_metrics() { log "folder of 202 files: blesend wall ${SEND_SECS}s"; echo "# METRIC folder202_wall_s=$SEND_SECS"; }
doctor_no_bluetoothd() {
  local drc
  timeout -k 5 30 "$SEND" doctor --adapter hci1 > "$W/logs/doctor-nobluez.out" 2>&1 < /dev/null; drc=$?
  check "blesend doctor without bluetoothd exit $drc, want $EXIT_BLUETOOTH_UNAVAILABLE" [ "$drc" = "$EXIT_BLUETOOTH_UNAVAILABLE" ]
  check "no '✗ bluetoothd … not running' line" grep -q '^✗ bluetoothd .*bluetoothd is not running' "$W/logs/doctor-nobluez.out"
  check "no fix for it" grep -q 'fix: sudo systemctl start bluetooth' "$W/logs/doctor-nobluez.out"
  end_logs+=("$W/logs/doctor-nobluez.out")
}

# The table. Columns, split at " | ":
#   TITLE   the case's name (expanded: $EXIT_*, $(...)); "+" goes on with the case above
#   BEFORE  commands run first: the receiver (ensure_main_recv: the shared one, into $MAIN_OUT), files
#   RUN     the run's name (logs/send-RUN.out, .err)
#   EXIT    the exit status blesend must give: an ExitStatus case, as EXIT_* names it (EXIT_ dropped)
#   ARGS    blesend's arguments (after --adapter hci1 --key sender --timeout 40); $F is $W/files
#   CHECKS  the checks, in order (the helpers above, or check itself)
# A row "@function" runs a case that does not fit (it calls begin and end itself), or a step between cases.
# Order matters: the receiver carries over from row to row, and the last case stops bluetoothd.
read -r -d '' MAIN_CASES <<'TABLE'
file zero.bin ($(stat -c %s "$F/zero.bin") B) arrives byte-identical | ensure_main_recv | zero.bin | SUCCESS | --to "$RPUB" "$F/zero.bin" | arrived zero.bin
file one.bin ($(stat -c %s "$F/one.bin") B) arrives byte-identical | ensure_main_recv | one.bin | SUCCESS | --to "$RPUB" "$F/one.bin" | arrived one.bin
file k100.bin ($(stat -c %s "$F/k100.bin") B) arrives byte-identical | ensure_main_recv | k100.bin | SUCCESS | --to "$RPUB" "$F/k100.bin" | arrived k100.bin
1 MiB file arrives byte-identical (timed) and --json output is valid with the expected events | ensure_main_recv | m1 | SUCCESS | --json --to "$RPUB" "$F/m1.bin" | arrived m1.bin; json_ok; has_events scanning connected handshake file-done done; on_l2cap "default transport: connected"; m1_metrics
several files in one session | ensure_main_recv; make_multi | multi | SUCCESS | --json --to "$RPUB" "$F/multi/m-a.bin" "$F/multi/m-b.bin" "$F/multi/m-c.bin" | arrived multi/m-a.bin; arrived multi/m-b.bin; arrived multi/m-c.bin; event_count connected 1 "want exactly one connection"; event_count file-done 3 "want 3 file-done events"; event_has "done event does not say files 3" done files=3
compressible 1 MiB text arrives byte-identical with fewer bytes on the air; a folder (nested, empty, executable, 200 small files) arrives identical | ensure_main_recv; make_text | text | SUCCESS | --json --to "$RPUB" "$F/text.txt" | arrived text.txt; text_compressed
+ | make_tree | tree | SUCCESS | --json --to "$RPUB" "$F/tree" | tree_arrived; event_has "no warning for the symlink" warning message~link; event_count connected 1 "want exactly one connection"; event_has "no folder-done event" folder-done files=202; no_hidden; folder_metrics
name collision: a.txt twice gives a.txt and a-1.txt, and both sides say so | ensure_main_recv | a1 | SUCCESS | --to "$RPUB" "$F/a.txt" | :
+ | : | a2 | SUCCESS | --json --to "$RPUB" "$F/a.txt" | arrived a.txt; arrived a.txt a-1.txt; event_has "sender's file-done lacks stored_name a-1.txt" file-done stored_name=a-1.txt; said "$RECV_LOG.err" 'a.txt exists: saved as a-1.txt' "receiver did not report 'saved as a-1.txt'"
untrusted sender is refused (exit $EXIT_PEER_REFUSED), nothing lands in the out dir | ensure_main_recv | stranger | PEER_REFUSED | --json --key "$W/keys/stranger" --to "$RPUB" "$F/k20.bin" | on_l2cap refused; out_unchanged; no_hidden; said "$SLOG.err" 'hint:' "no refusal hint on stderr"; said "$RECV_LOG.err" 'not trusted' "receiver did not log the refusal"
receiver whose key differs from --to is refused (exit $EXIT_PEER_REFUSED) | ensure_main_recv | mismatch | PEER_REFUSED | --to "$W/keys/other.pub" "$F/k20.bin" | out_unchanged; no_hidden
a key added to the trust directory while blerecv runs is trusted at the next handshake; removed, it is refused at the next one (exit $EXIT_PEER_REFUSED), without a restart | ensure_main_recv; trust_other | trust-added | SUCCESS | --key "$W/keys/other" --to "$RPUB" "$F/k30.bin" | arrived k30.bin; said "$RECV_LOG.err" 'read again: added other' "receiver did not log the key added"
+ | untrust_other | trust-removed | PEER_REFUSED | --key "$W/keys/other" --to "$RPUB" "$F/k20.bin" | out_unchanged; no_hidden; said "$RECV_LOG.err" 'read again: removed other' "receiver did not log the key removed"
@run_cut
progress away from a terminal (issue 34): with stdout and stderr in files, a 1 MiB file over GATT gives at least 5 plain progress lines on each side | ensure_main_recv; cp "$F/m1.bin" "$F/progress.bin" | progress | SUCCESS | --transport gatt --to "$RPUB" "$F/progress.bin" | arrived progress.bin; progress_lines "$SLOG.err" '^blesend: progress\.bin [0-9]+ % ' blesend; progress_lines "$RECV_LOG.err" '^blerecv: progress\.bin from .* [0-9]+ % ' blerecv
--transport gatt still works; a receiver with --no-l2cap is served by GATT; --transport l2cap to it exits $EXIT_TRANSPORT_UNAVAILABLE | ensure_main_recv | gatt | SUCCESS | --json --transport gatt --to "$RPUB" "$F/g.bin" | on_gatt "--transport gatt"; arrived g.bin
+ | recv_nol2cap | nol2cap-auto | SUCCESS | --json --to "$RPUB" "$F/k30.bin" | on_gatt "auto to a GATT-only receiver"; arrived k30.bin k30.bin "$W/out-nol2cap"; said "$RECV_LOG.err" 'no-l2cap\|GATT only' "receiver did not say it serves GATT only"
+ | : | nol2cap-forced | TRANSPORT_UNAVAILABLE | --transport l2cap --to "$RPUB" "$F/k20.bin" | said "$SLOG.err" 'offers no L2CAP channel' "no 'offers no L2CAP channel' message"; check "k20.bin arrived although the sender failed" absent "$W/out-nol2cap/k20.bin"
@stop_recv
@run_first_contact
@main_nonroot
--once: blerecv exits $EXIT_SUCCESS after one sender | start_recv once "$W/out-once" --once --json || fail "receiver did not start" | once | SUCCESS | --to "$RPUB" "$F/k20.bin" | recv_exit "blerecv --once"; arrived k20.bin k20.bin "$W/out-once"; json_ok "$RECV_LOG.out" "receiver stdout"; recv_has_events listening connected handshake file-done done
stdin stream (- --name s.bin) into blerecv --stdout | recv_stdout | stdin | SUCCESS | --to "$RPUB" - --name s.bin < "$F/s.bin" | recv_exit "blerecv --stdout"; check "stream differs" same "$F/s.bin" "$W/out-stdout/out"
@main_doctor
bluetoothd not running: blesend exits $EXIT_BLUETOOTH_UNAVAILABLE with a hint, and blesend doctor names it | stop_bluetoothd | nobluez | BLUETOOTH_UNAVAILABLE | --to "$RPUB" "$F/one.bin" | said "$SLOG.err" 'bluetoothd is not running' "no 'bluetoothd is not running' message"; said "$SLOG.err" 'hint:' "no hint"; doctor_no_bluetoothd
TABLE

# run_main: every row of MAIN_CASES in order. A row with a title begins a case (ending the one
# before); BEFORE, blesend (send_run, bounded), its exit status, then CHECKS.
run_main() {
  # shellcheck disable=SC2034  # F is the table's $F (its columns are eval'ed)
  local row title before name want args checks code F=$W/files open=0
  local -a rows cols end_logs=()
  mapfile -t rows <<< "$MAIN_CASES"   # (an array, not a loop reading stdin: the cases' commands inherit it)
  ensure_main_recv || { fail "main receiver did not start"; }
  for row in "${rows[@]}"; do
    [ -n "$row" ] || continue
    if [[ $row == @* ]]; then
      [ "$open" = 1 ] && { end "${end_logs[@]}"; open=0; }
      "${row#@}"
      continue
    fi
    cols=()
    while [[ $row == *" | "* ]]; do cols+=("${row%%" | "*}"); row=${row#*" | "}; done
    cols+=("$row")
    [ "${#cols[@]}" = 6 ] || { echo "e2e: a MAIN_CASES row has ${#cols[@]} columns, not 6: ${cols[0]}" >&2; exit 2; }
    title=${cols[0]} before=${cols[1]} name=${cols[2]} want=${cols[3]} args=${cols[4]} checks=${cols[5]}
    if [ "$title" != + ]; then
      [ "$open" = 1 ] && end "${end_logs[@]}"
      eval "title=\"$title\""
      begin "$title"
      open=1
    fi
    eval "$before"
    MAIN_BEFORE=$(ls -A "$MAIN_OUT" | sort)
    eval "send_run \"\$name\" $args"
    code=EXIT_$want
    check "blesend $name: exit $SRC, want ${!code} ($want)" [ "$SRC" = "${!code}" ]
    end_logs=("$SLOG.err" "$SLOG.out" "$RECV_LOG.err" "$RECV_LOG.out")
    eval "$checks"
  done
  [ "$open" = 1 ] && end "${end_logs[@]}"
}

# ---- the main cases that are not one blesend run ----
# Both tools as an ordinary user in the bluetooth group, over L2CAP.
main_nonroot() {
  begin "non-root: blerecv and blesend as an unprivileged user in group bluetooth, over L2CAP"
  local nr=$W/nonroot nrgid
  nrgid=$(getent group bluetooth | cut -d: -f3)
  mkdir -p "$nr/keys" "$nr/trust" "$nr/out"
  cp "$W/keys/sender" "$W/keys/sender.pub" "$W/keys/receiver" "$W/keys/receiver.pub" "$nr/keys/"
  cp "$W/trust/"* "$nr/trust/"
  cp "$W/files/k100.bin" "$nr/"
  chown -R 65534:"${nrgid:-65534}" "$nr"
  chmod 711 "$W"
  as_user() { setpriv --reuid=65534 --regid="${nrgid:-65534}" --clear-groups -- "$@"; }
  RECV_LOG=$W/logs/recv-nonroot
  as_user "$RECV" --adapter hci0 --trust "$nr/trust" --key "$nr/keys/receiver" --out "$nr/out" --state "$nr/state" --once --json -v "${RECV_LINKS[@]}" \
    > "$RECV_LOG.out" 2> "$RECV_LOG.err" &
  RECV_PID=$!
  PIDS+=("$RECV_PID")
  if [ -z "$nrgid" ]; then
    fail "no bluetooth group on this system"
  elif wait_for2 "$RECV_LOG.out" '"listening"' "$RECV_LOG.err" 'waiting for senders' 30 "$RECV_PID"; then
    SLOG=$W/logs/send-nonroot
    local t; t=$(now)
    SRC=0
    timeout -k 5 "$SEND_TIMEOUT" setpriv --reuid=65534 --regid="$nrgid" --clear-groups -- \
      "$SEND" --adapter hci1 --key "$nr/keys/sender" --timeout 40 --json --to "$nr/keys/receiver.pub" "$nr/k100.bin" \
      > "$SLOG.out" 2> "$SLOG.err" || SRC=$?
    log "blesend as uid 65534: exit $SRC after $(elapsed "$t")s"
    check "blesend (non-root) exit $SRC, want $EXIT_SUCCESS" [ "$SRC" = "$EXIT_SUCCESS" ]
    check "non-root connected over '$(transports "$SLOG.out")', want l2cap (L2CAP failed: $(fallbacks "$SLOG.out"))" all_l2cap "$SLOG.out"
    check "k100.bin (non-root) differs or missing" same "$W/files/k100.bin" "$nr/out/k100.bin"
    check "received file not owned by the user" [ "$(stat -c %u "$nr/out/k100.bin" 2>/dev/null)" = 65534 ]
  else
    fail "blerecv did not start as uid 65534: $(tail -n 3 "$RECV_LOG.err" | tr '\n' ' ')"
  fi
  wait_pid "$RECV_PID" 20
  RECV_PID=""
  chmod 700 "$W"
  end "$SLOG.err" "$RECV_LOG.err"
}

# Issue 14: blesend doctor / blerecv doctor pass here, and name a powered-off adapter with its fix.
main_doctor() {
  begin "doctor: passes on both adapters; names hci0 powered off with its fix (exit $EXIT_BLUETOOTH_UNAVAILABLE)"
  stop_recv
  local drc
  timeout -k 5 30 "$SEND" doctor --adapter hci1 > "$W/logs/doctor-send.out" 2>&1 < /dev/null; drc=$?
  check "blesend doctor --adapter hci1 exit $drc, want $EXIT_SUCCESS" [ "$drc" = "$EXIT_SUCCESS" ]
  check "no 'ready to send'" grep -q '^blesend doctor: ready to send' "$W/logs/doctor-send.out"
  timeout -k 5 30 "$RECV" doctor --adapter hci0 --json > "$W/logs/doctor-recv.json" 2>&1 < /dev/null; drc=$?
  check "blerecv doctor --adapter hci0 --json exit $drc, want $EXIT_SUCCESS" [ "$drc" = "$EXIT_SUCCESS" ]
  check "--json is not one doctor event with ok true, role receiver" "$LABCHECK" object "$W/logs/doctor-recv.json" event=doctor v=1 ok=true role=receiver
  # (busctl, not btmgmt: btmgmt 5.82 with no terminal returns without powering off)
  busctl --system set-property org.bluez /org/bluez/hci0 org.bluez.Adapter1 Powered b false > /dev/null 2>&1
  wait_until 10 sh -c 'busctl --system get-property org.bluez /org/bluez/hci0 org.bluez.Adapter1 Powered | grep -q false'
  timeout -k 5 30 "$RECV" doctor --adapter hci0 > "$W/logs/doctor-off.out" 2>&1 < /dev/null; drc=$?
  check "blerecv doctor with hci0 off exit $drc, want $EXIT_BLUETOOTH_UNAVAILABLE" [ "$drc" = "$EXIT_BLUETOOTH_UNAVAILABLE" ]
  check "no '✗ powered … hci0 is powered off' line" grep -q '^✗ powered .*hci0 is powered off' "$W/logs/doctor-off.out"
  check "no fix for it" grep -q 'fix: busctl --system set-property org.bluez /org/bluez/hci0 org.bluez.Adapter1 Powered b true' "$W/logs/doctor-off.out"
  busctl --system set-property org.bluez /org/bluez/hci0 org.bluez.Adapter1 Powered b true > /dev/null 2>&1
  wait_until 10 sh -c 'busctl --system get-property org.bluez /org/bluez/hci0 org.bluez.Adapter1 Powered | grep -q true'
  end "$W/logs/doctor-send.out" "$W/logs/doctor-recv.json" "$W/logs/doctor-off.out"
}

# =====================================================================================
run_mtu() {
  local strict=$1
  begin "forced small MTU: 20 KiB arrives over GATT, connected event reports a small MTU"
  start_recv mtu "$W/out-mtu" --once --json || fail "receiver did not start"
  local rpid=$RECV_PID
  # The ATT MTU matters to GATT only (an L2CAP channel has its own SDU size).
  l2cap_sampler "$W/logs/l2cap-mtu"
  send_run mtu --json --transport gatt --to "$RPUB" "$W/files/k20.bin"
  kill "$SAMPLER" 2>/dev/null
  log "EATT on (the default): L2CAP channels on PSM 39 sampled: $(eatt_channels "$W/logs/l2cap-mtu")"
  check "blesend exit $SRC, want $EXIT_SUCCESS" [ "$SRC" = "$EXIT_SUCCESS" ]
  check "k20.bin differs or missing" same "$W/files/k20.bin" "$W/out-mtu/k20.bin"
  local mtu rmtu fsecs
  mtu=$(json_get "$SLOG.out" connected mtu)
  rmtu=$(json_get "$RECV_LOG.out" connected mtu)
  fsecs=$(json_get "$SLOG.out" file-done seconds)
  log "small MTU: sender mtu=$mtu receiver mtu=$rmtu; 20 KiB in ${fsecs}s ($(goodput 20480 "${fsecs:-0}") KiB/s)"
  echo "# METRIC mtu_sender=$mtu mtu_receiver=$rmtu k20_file_s=$fsecs"
  if [ "$strict" = 1 ]; then
    check "sender MTU '$mtu' is not small (<= 64)" small_mtu "$mtu"
  fi
  check "stdout has a line that is not JSON" valid_json "$SLOG.out"
  local rrc; wait_pid "$rpid" 20; rrc=$WRC
  RECV_PID=""
  check "blerecv --once exit $rrc, want $EXIT_SUCCESS" [ "$rrc" = "$EXIT_SUCCESS" ]
  end "$SLOG.err" "$SLOG.out" "$RECV_LOG.err"
}

# l2cap_sampler FILE: every 0.5 s until killed, the kernel's L2CAP channels (debugfs: src dst
# state psm scid dcid imtu omtu sec mode, newer kernels with "(type)" after each address; EATT's
# are on PSM 39, 0x27) into FILE. Sets SAMPLER. l2cap_rows FILE: the rows without the types.
l2cap_sampler() {
  ( while :; do cat /sys/kernel/debug/bluetooth/l2cap 2>/dev/null; echo --; nap 0.5; done ) > "$1" &
  SAMPLER=$!
  PIDS+=("$SAMPLER")
}
l2cap_rows() { sed 's/ ([0-9]*)//g' "$1"; }
eatt_channels() { l2cap_rows "$1" | awk '$4 == 39' | wc -l; }   # eatt_channels FILE: rows on PSM 39 sampled

# EATT off (issue 31, item 8): BlueZ to BlueZ runs GATT over EATT, while phones and bumble's host
# use ATT on the fixed channel, CID 4. bluetoothd restarted with [GATT] Channels=1 (one ATT bearer:
# no EATT) and ExchangeMTU=48, whereas the receiver's GATT server would take up to 517 bytes
# (src/shared/att.c), so the MTU exchange settles on less than the server offers. Needs bluetoothd
# started from bt-up.sh's $LABLOG/main.conf (BT_MAINCONF set, as the mtu boot does).
run_att() {
  begin "EATT off ([GATT] Channels=1, ExchangeMTU=48): ATT on CID 4 with a small MTU, 20 KiB arrives over GATT"
  local conf=$LABLOG/main.conf
  if [ ! -f "$conf" ]; then fail "no $conf: bluetoothd runs the default main.conf (run this group with BT_MAINCONF set)"; end; return; fi
  printf '[GATT]\nChannels=1\nExchangeMTU=48\n' > "$conf"
  restart_bluetoothd || { fail "bluetoothd did not come back with Channels=1"; end; return; }
  start_recv att "$W/out-att" --once --json || fail "receiver did not start"
  local rpid=$RECV_PID
  l2cap_sampler "$W/logs/l2cap-att"
  send_run att --json --transport gatt --to "$RPUB" "$W/files/k20.bin"
  kill "$SAMPLER" 2>/dev/null
  check "blesend exit $SRC, want $EXIT_SUCCESS" [ "$SRC" = "$EXIT_SUCCESS" ]
  check "k20.bin differs or missing" same "$W/files/k20.bin" "$W/out-att/k20.bin"
  local mtu eatt
  mtu=$(json_get "$SLOG.out" connected mtu)
  eatt=$(eatt_channels "$W/logs/l2cap-att")
  log "EATT off: sender mtu=$mtu; L2CAP channels on PSM 39 (EATT) sampled: $eatt; ATT (CID 4) rows: $(l2cap_rows "$W/logs/l2cap-att" | awk '$5 == "0x0004"' | wc -l)"
  echo "# METRIC att_mtu_sender=$mtu att_eatt_lines=$eatt"
  check "sender MTU '$mtu' is not small (<= 64)" small_mtu "$mtu"
  check "EATT channels (PSM 39) were open: $eatt sampled lines" [ "$eatt" = 0 ]
  local rrc; wait_pid "$rpid" 20; rrc=$WRC
  RECV_PID=""
  check "blerecv --once exit $rrc, want $EXIT_SUCCESS" [ "$rrc" = "$EXIT_SUCCESS" ]
  end "$SLOG.err" "$SLOG.out" "$RECV_LOG.err" "$W/logs/l2cap-att"
}

# =====================================================================================
# Two receivers advertising the ordinary way (issue 20): needs three controllers, like discovery.
# A = blerecv on hci0 (key receiver), B = blerecv on hci2 (key other); both trust the sender. Without
# private discovery the sender cannot tell them apart before the handshake: it must try the other
# one at once after a refusal, and report a refusal as soon as every receiver in range has said no.
run_receivers() {
  local a_out=$W/out-ra b_out=$W/out-rb b_trust=$W/trust-rb
  mkdir -p "$a_out" "$b_out" "$b_trust"
  "$RECV" trust "$W/keys/sender.pub" --name sender --dir "$b_trust" > /dev/null 2>&1
  start_recv recv-a "$a_out" -v || { fail "receiver A did not start"; return; }
  local blog=$W/logs/recv-recv-b
  # B runs with umask 077: what it stores must be 0600 (issue 20: modes were forced to 0644).
  (umask 077 && exec "$RECV" --adapter hci2 --trust "$b_trust" --key "$W/keys/other" --out "$b_out" -v "${RECV_LINKS[@]}") > "$blog.out" 2> "$blog.err" &
  local bpid=$!
  PIDS+=("$bpid")
  wait_for2 "$blog.out" '"listening"' "$blog.err" 'waiting for senders' 30 "$bpid" || fail "receiver B did not start"
  sleep 2   # both advertising

  # On trixie (BlueZ 5.82) a scan could report a receiver only 10-17 s after it started (lab
  # README, "A scan often took about 11 s"; blesend now restarts a silent scan, but the race can
  # repeat): a sender refused by A may give up before bluetoothd ever reported B. There the cases
  # check the answers (a file, or a refusal that says so; never the old wrong message) with a
  # wider bound; the host image checks the goal's order of time.
  local strict=1 slack=0
  [ "${BLESEND_LAB_IMAGE:-host}" = host ] || { strict=0; slack=15; }
  begin "two receivers: the pinned one is reached whichever is tried first (pinned B, pinned A, twice; goal 10 s)"
  local i pin want out first n umask_seen=0
  for i in 1 2; do
    for pin in b a; do
      if [ "$pin" = a ]; then want=$RPUB; out=$a_out; else want=$W/keys/other.pub; out=$b_out; fi
      rm -f "$out/one.bin"
      send_run recv-$pin$i --json -v --to "$want" "$W/files/one.bin"
      first=$(events "$SLOG.out" first found device | sed -n 's/.*dev_\([0-9A-F_]*\)$/\1/p')
      n=$(count_event "$SLOG.out" found)
      log "pinned $pin, run $i: exit $SRC after ${SEND_SECS}s; tried $n device(s), first $first"
      echo "# METRIC pinned_${pin}_run${i}_s=$SEND_SECS tried=$n first=$first"
      check "pinned $pin, run $i: a wrong message (transfer characteristic, D-Bus)" lacks "$SLOG.err" 'transfer characteristic|D-Bus'
      # The goal is 10 s (7.2-9.3 s here, TCG); the bound leaves room for a slower CI machine and
      # still catches the old behaviour (37-41 s, or no file at all).
      check "pinned $pin, run $i: took ${SEND_SECS} s, want at most $((15 + slack)) (goal 10)" \
        awk -v s="$SEND_SECS" -v b=$((15 + slack)) 'BEGIN { exit !(s <= b) }'
      if [ "$strict" = 0 ] && [ "$SRC" = "$EXIT_PEER_REFUSED" ] && [ "$n" = 1 ]; then
        log "pinned $pin, run $i: refused by the one receiver bluetoothd had reported (5.82 scan lag); not counted"
        check "pinned $pin, run $i: the refusal does not say so" grep -q 'error:.*refused' "$SLOG.err"
        continue
      fi
      check "pinned $pin, run $i: blesend exit $SRC, want $EXIT_SUCCESS" [ "$SRC" = "$EXIT_SUCCESS" ]
      check "pinned $pin, run $i: one.bin differs or missing" same "$W/files/one.bin" "$out/one.bin"
      if [ "$pin" = b ] && [ "$SRC" = "$EXIT_SUCCESS" ]; then
        umask_seen=1
        check "B (umask 077) stored one.bin with mode $(stat -c %a "$b_out/one.bin" 2>/dev/null), want 600" \
          [ "$(stat -c %a "$b_out/one.bin" 2>/dev/null)" = 600 ]
      fi
    done
  done
  check "no file from B (umask 077) to check its mode" [ "$umask_seen" = 1 ]
  end "$SLOG.err" "$RECV_LOG.err" "$blog.err"

  begin "two receivers: a stranger pinned to A learns exit $EXIT_PEER_REFUSED within 12 s (goal 6; was 37-42 s), with a message that says it was refused"
  SLOG=$W/logs/send-recv-stranger
  local t0 rc=0 took
  t0=$(now)
  timeout -k 5 60 "$SEND" --adapter hci1 --key "$W/keys/stranger" --timeout 40 --json -v --to "$RPUB" "$W/files/one.bin" \
    > "$SLOG.out" 2> "$SLOG.err" || rc=$?
  took=$(elapsed "$t0")
  log "stranger: exit $rc after ${took}s; tried $(count_event "$SLOG.out" found) device(s): $(grep 'error:' "$SLOG.err" | head -n 1)"
  echo "# METRIC two_receivers_stranger_s=$took"
  check "stranger: blesend exit $rc, want $EXIT_PEER_REFUSED" [ "$rc" = "$EXIT_PEER_REFUSED" ]
  # Both receivers are tried (A refuses, B was seen and is untried), one link at a time: A's link
  # ends about 2 s after its refusal (bluetoothd's disconnect timer) before B is connected.
  check "stranger: took ${took} s, want at most $((12 + slack)) (goal 6)" awk -v s="$took" -v b=$((12 + slack)) 'BEGIN { exit !(s <= b) }'
  check "stranger: no 'refused' in the error line" grep -q 'error:.*refused' "$SLOG.err"
  check "stranger: a wrong message (transfer characteristic, D-Bus)" lacks "$SLOG.err" 'transfer characteristic|D-Bus'
  end "$SLOG.err" "$RECV_LOG.err" "$blog.err"
  kill "$bpid" 2>/dev/null
  wait_pid "$bpid" 10
  stop_recv
}

# =====================================================================================
# Private discovery (issue 14): needs three controllers, BTVIRT_ARGS='-L -l3' BT_NCTRL=3.
run_discovery() {
  local a_out=$W/out-a b_out=$W/out-b b_trust=$W/trust-b
  mkdir -p "$a_out" "$b_out" "$b_trust"
  "$RECV" trust "$W/keys/sender.pub" --name sender --dir "$b_trust" > /dev/null 2>&1
  # Receiver A on hci0 (key receiver), receiver B on hci2 (key other); both trust the sender and
  # both advertise private-discovery data instead of the service UUID. The virtual controllers run
  # with LE privacy off (the cases below check the senders' fixed addresses), which blerecv refuses
  # for --private-discovery unless given --allow-public-address (EXIT_ADDRESS_NOT_PRIVATE otherwise).
  start_recv disc-a "$a_out" --private-discovery --allow-public-address || { fail "receiver A did not start"; return; }
  local blog=$W/logs/recv-disc-b
  "$RECV" --adapter hci2 --trust "$b_trust" --key "$W/keys/other" --out "$b_out" --private-discovery --allow-public-address "${RECV_LINKS[@]}" \
    > "$blog.out" 2> "$blog.err" &
  local bpid=$!
  PIDS+=("$bpid")
  wait_for2 "$blog.out" '"listening"' "$blog.err" 'waiting for senders' 30 "$bpid" || fail "receiver B did not start"
  sleep 2   # both advertising

  begin "private discovery on a fixed address: blerecv refuses to start (exit $EXIT_ADDRESS_NOT_PRIVATE) and names LE privacy"
  local plog=$W/logs/recv-disc-public rc=0
  mkdir -p "$W/out-public"
  timeout -k 5 30 "$RECV" --adapter hci0 --trust "$W/trust" --key "$W/keys/receiver" --out "$W/out-public" --private-discovery \
    > "$plog.out" 2> "$plog.err" || rc=$?
  log "blerecv --private-discovery without LE privacy: exit $rc: $(grep -m1 'error:' "$plog.err")"
  check "exit $rc, want $EXIT_ADDRESS_NOT_PRIVATE" [ "$rc" = "$EXIT_ADDRESS_NOT_PRIVATE" ]
  check "the error does not name LE privacy" grep -q 'error:.*LE privacy' "$plog.err"
  check "the hint does not say how to turn it on" grep -q 'hint:.*Privacy = device' "$plog.err"
  end "$plog.err"

  begin "private discovery: with two receivers advertising, blesend connects straight to the one it pinned"
  local i dev
  for i in 1 2 3; do
    send_run disc-a$i --json --private-discovery --to "$RPUB" "$W/files/one.bin"
    check "to A, run $i: blesend exit $SRC, want $EXIT_SUCCESS" [ "$SRC" = "$EXIT_SUCCESS" ]
    dev=$(events "$SLOG.out" count found)
    check "to A, run $i: $dev devices tried, want 1" [ "$dev" = 1 ]
    check "to A, run $i: not A's device" events "$SLOG.out" has found device=/org/bluez/hci1/dev_00_AA_01_00_00_00
  done
  # B (hci2, 00:AA:01:02:00:02) was on the air meanwhile, with its own data: the sender's adapter saw it.
  if [ "${BLESEND_LAB_IMAGE:-host}" = host ]; then
    check "the sender's adapter never saw B's private-discovery data" \
      sh -c 'busctl --system get-property org.bluez /org/bluez/hci1/dev_00_AA_01_02_00_02 org.bluez.Device1 ServiceData | grep -q 6f3c0001'
  else
    log "not checked on this image: that B's data was seen (bluetoothd 5.82 had no object for B when this ran; cause not confirmed)"
  fi
  check "A did not get one.bin" same "$W/files/one.bin" "$a_out/one.bin"
  check "A refused someone" sh -c "! grep -q refused '$RECV_LOG.err'"
  check "B was connected to" sh -c "! grep -q connected '$blog.err'"
  end "$SLOG.err" "$RECV_LOG.err" "$blog.err"

  begin "private discovery: an untrusted sender learns within 3 s that no receiver nearby lists it (exit $EXIT_PEER_REFUSED)"
  SLOG=$W/logs/send-disc-stranger
  # The answer is timed from the moment bluetoothd first reports a blesend receiver to the
  # sender's adapter (hci1), as seen on the bus: on 5.82 a scan sometimes reports nothing for
  # 10-20 s (lab/README.md, "A scan often takes about 11 s"), which blesend cannot shorten.
  dbus-monitor --system "type='signal',sender='org.bluez'" > "$SLOG.bus" 2>&1 &
  local mon=$!
  sleep 1
  local t0=$EPOCHREALTIME rc=0
  timeout -k 5 30 "$SEND" --adapter hci1 --key "$W/keys/stranger" --timeout 20 --private-discovery --to "$RPUB" "$W/files/one.bin" \
    > "$SLOG.out" 2> "$SLOG.err" || rc=$?
  local t1=$EPOCHREALTIME
  kill "$mon" 2>/dev/null; wait "$mon" 2>/dev/null
  # First signal after t0 about a device object of hci1 that carries the blesend service UUID
  # (in its ServiceData or UUIDs); no such signal means the object was known already: count from t0.
  local seen
  seen=$(awk -v t0="$t0" '
    /^signal / { ok = 0; t = ""
                 for (i = 1; i <= NF; i++) { if ($i ~ /^time=/) t = substr($i, 6)
                                             if ($i ~ /^path=\/org\/bluez\/hci1\/dev_/) ok = 1 }
                 next }
    /object path "\/org\/bluez\/hci1\/dev_/ { ok = 1 }
    /6f3c0001/ && ok && t != "" && t + 0 >= t0 + 0 { print t; exit }' "$SLOG.bus")
  local took after
  took=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
  after=$(awk -v a="${seen:-$t0}" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
  log "stranger: exit ${took} s after start; bluetoothd reported a receiver $(awk -v a="$t0" -v s="${seen:-$t0}" 'BEGIN { printf "%.1f", s - a }') s after start"
  check "stranger: blesend exit $rc, want $EXIT_PEER_REFUSED" [ "$rc" = "$EXIT_PEER_REFUSED" ]
  check "stranger: answered ${after} s after bluetoothd reported a receiver, want at most 3 s" \
    awk -v x="$after" 'BEGIN { exit !(x <= 3.0) }'
  check "stranger: no 'does not list your key' message" grep -q 'does not list your key' "$SLOG.err"
  check "the stranger connected to A (A refused it)" sh -c "! grep -qi 'refused' '$RECV_LOG.err'"
  echo "# METRIC stranger_refused_s=$took stranger_after_sighting_s=$after"
  end "$SLOG.err" "$RECV_LOG.err"
  kill "$bpid" 2>/dev/null
  stop_recv
}

# =====================================================================================
# A busy receiver (issue 20): three controllers (BTVIRT_ARGS='-L -l3' BT_NCTRL=3). Not in CI: in
# btvirt (5.66 and 5.82) every LE link of a controller gets handle 0x002a, so the receiver's
# controller cannot hold the second sender's link beside the first (lab/README.md). The receiver
# (hci0) serves one sender at a time; a second trusted sender (hci2, key "other") that connects
# meanwhile gets no handshake answer. It must read the receiver as busy: a "busy" event and a
# message that says so, retries within --timeout, and then the file (once the first sender is
# done) or EXIT_RECEIVER_BUSY (never EXIT_PEER_REFUSED).
busy_sender_bg() {   # busy_sender_bg NAME TIMEOUT FILE [blesend args]: on hci2 with key "other"; sets B2PID, B2LOG, B2_T
  B2LOG=$W/logs/send-$1
  : > "$B2LOG.out"; : > "$B2LOG.err"
  B2_T=$(now)
  "$SEND" --adapter hci2 --key "$W/keys/other" --timeout "$2" -v "${@:4}" --to "$RPUB" "$3" > "$B2LOG.out" 2> "$B2LOG.err" &
  B2PID=$!
  PIDS+=("$B2PID")
}
run_busy() {
  local trust=$W/trust-busy out=$W/out-busy took
  mkdir -p "$trust"
  "$RECV" trust "$W/keys/sender.pub" --name sender --dir "$trust" > /dev/null 2>&1
  "$RECV" trust "$W/keys/other.pub" --name other --dir "$trust" > /dev/null 2>&1
  RECV_TRUST=$trust start_recv busy "$out" -v || { fail "receiver did not start"; return; }

  begin "busy receiver: a second trusted sender reads it as busy, retries, and its file arrives once the first is done"
  # The first sender holds the receiver: paused (SIGSTOP) mid-file, its link up and quiet, well
  # inside the receiver's 30 s idle limit.
  send_bg busy-first --json --to "$RPUB" "$W/files/m1.bin"
  wait_progress "$SLOG.out" $((64 * 1024)) 60 "$SPID" || fail "first sender: no progress"
  kill -STOP "$SPID"
  log "first sender paused at $(max_progress "$SLOG.out") bytes"
  # (without --json: the retry is announced on standard error)
  busy_sender_bg busy-second 60 "$W/files/k100.bin"
  wait_for "$B2LOG.err" 'busy with another sender' 30 "$B2PID" || fail "second sender: no word of a busy receiver within 30 s"
  log "second sender: busy after $(elapsed "$B2_T") s; the first sender goes on"
  kill -CONT "$SPID"
  finish_send 120
  check "first sender: exit $SRC, want $EXIT_SUCCESS" [ "$SRC" = "$EXIT_SUCCESS" ]
  check "first sender: m1.bin differs or missing" same "$W/files/m1.bin" "$out/m1.bin"
  wait_pid "$B2PID" 90
  took=$(elapsed "$B2_T")
  log "second sender: exit $WRC after ${took}s, busy retries announced: $(grep -c 'busy with another sender' "$B2LOG.err")"
  echo "# METRIC busy_second_sender_s=$took"
  check "second sender: exit $WRC, want $EXIT_SUCCESS" [ "$WRC" = "$EXIT_SUCCESS" ]
  check "second sender: k100.bin differs or missing" same "$W/files/k100.bin" "$out/k100.bin"
  check "second sender: a wrong message (refused, transfer characteristic, D-Bus)" lacks "$B2LOG.err" 'refused|transfer characteristic|D-Bus'
  end "$B2LOG.err" "$SLOG.err" "$RECV_LOG.err"

  begin "busy receiver: a sender whose --timeout runs out while the receiver stays busy exits $EXIT_RECEIVER_BUSY (busy), not $EXIT_PEER_REFUSED"
  # The first sender sends over GATT (slower: it stays busy for the whole case) and is stopped
  # with SIGTERM once the second has given up.
  send_bg busy-long --json --transport gatt --to "$RPUB" "$W/files/m4.bin"
  wait_progress "$SLOG.out" $((64 * 1024)) 60 "$SPID" || fail "first sender: no progress"
  busy_sender_bg busy-gives-up 8 "$W/files/one.bin" --json
  wait_pid "$B2PID" 60
  took=$(elapsed "$B2_T")
  log "second sender: exit $WRC after ${took}s: $(grep -m1 'error:' "$B2LOG.err")"
  echo "# METRIC busy_gives_up_s=$took"
  check "the first sender finished before the second gave up (the receiver was not busy throughout)" kill -0 "$SPID"
  check "second sender: exit $WRC, want $EXIT_RECEIVER_BUSY" [ "$WRC" = "$EXIT_RECEIVER_BUSY" ]
  check "second sender: the error does not say the receiver is busy" grep -q 'error:.*busy' "$B2LOG.err"
  check "second sender: no busy event" has_event "$B2LOG.out" busy
  check "one.bin arrived although the receiver was busy" absent "$out/one.bin"
  check "second sender: stdout has a line that is not JSON" valid_json "$B2LOG.out"
  kill -TERM "$SPID" 2>/dev/null
  finish_send 30
  check "first sender: exit $SRC after SIGTERM, want $EXIT_TERMINATED" [ "$SRC" = "$EXIT_TERMINATED" ]
  check "m4.bin at the target path after an interrupted send" absent "$out/m4.bin"
  end "$B2LOG.err" "$SLOG.err" "$RECV_LOG.err"
  stop_recv
}

# =====================================================================================
# Pairing by a short code (issue 33), in the discovery boot (three controllers: the relay case
# puts a device of its own on hci2). Every machine starts from nothing: its own
# XDG_CONFIG_HOME, no key, no trust, no address book (pair makes the key pair).
# pair_recv NAME DIR ADAPTER [args...]: `blerecv pair` in the background as a fresh machine whose
# config is DIR; waits for its first code. Sets PRPID, PRLOG, PCODE.
pair_recv() {
  local name=$1 dir=$2 adapter=$3; shift 3
  PRLOG=$W/logs/pair-recv-$name
  : > "$PRLOG.out"; : > "$PRLOG.err"
  # (--trust: as root the default trust directory is /etc/blesend/trusted, shared by every case)
  XDG_CONFIG_HOME=$dir "$RECV" pair --adapter "$adapter" --trust "$dir/blesend/trusted" --json --timeout 150 "${RECV_LINKS[@]}" "$@" \
    > "$PRLOG.out" 2> "$PRLOG.err" &
  PRPID=$!
  PIDS+=("$PRPID")
  PCODE=""
  wait_for "$PRLOG.out" '"pairing-code"' 30 "$PRPID" || return 1
  PCODE=$(pair_code 1 "$PRLOG.out")
}
pair_code() { grep -oE '"code":"[0-9]{4} [0-9]{4}"' "$2" | sed -n "${1}p" | grep -oE '[0-9]{4} [0-9]{4}'; }   # pair_code N LOG: the Nth code shown
# pair_send NAME DIR ADAPTER CODE [args...]: `blesend pair` as a fresh machine whose config is DIR. Sets SRC, SLOG.
pair_send() {
  local name=$1 dir=$2 adapter=$3 code=$4; shift 4
  SLOG=$W/logs/pair-send-$name
  local t; t=$(now)
  SRC=0
  XDG_CONFIG_HOME=$dir timeout -k 5 90 "$SEND" pair --adapter "$adapter" --code "$code" --timeout 40 --json "$@" > "$SLOG.out" 2> "$SLOG.err" || SRC=$?
  SEND_SECS=$(elapsed "$t")
  log "blesend pair $name: exit $SRC after ${SEND_SECS}s"
}
key_of() { grep -v '^#' "$1" 2>/dev/null | head -n 1; }   # key_of PUB: its key line
pub_count() { find "$1" -name '*.pub' 2>/dev/null | wc -l; }   # pub_count DIR
holds_key() { grep -qF "$(key_of "$2")" "$1"/*.pub 2>/dev/null; }   # holds_key DIR PUB

run_pairing() {
  local r=$W/pair-r s=$W/pair-s rrc
  mkdir -p "$r" "$s"
  begin "pairing: two fresh machines pair by the code alone (blerecv pair shows it, blesend pair types it); each pins the other; then blesend --to NAME sends a file"
  if pair_recv ok "$r" hci0; then
    # blesend scan sees it, pairing, under the name it advertises (this machine's host name).
    local scanlog=$W/logs/scan-pairing src=0
    XDG_CONFIG_HOME=$s timeout -k 5 30 "$SEND" scan --adapter hci1 --timeout 4 --json > "$scanlog.out" 2> "$scanlog.err" || src=$?
    check "blesend scan exit $src, want $EXIT_SUCCESS" [ "$src" = "$EXIT_SUCCESS" ]
    check "blesend scan lists no pairing receiver named $(cut -c1-9 /proc/sys/kernel/hostname)" events "$scanlog.out" has nearby mode=pairing "name=$(cut -c1-9 /proc/sys/kernel/hostname)"
    pair_send ok "$s" hci1 "$PCODE" --name office
    check "blesend pair exit $SRC, want $EXIT_SUCCESS" [ "$SRC" = "$EXIT_SUCCESS" ]
    wait_pid "$PRPID" 20; rrc=$WRC
    check "blerecv pair exit $rrc, want $EXIT_SUCCESS" [ "$rrc" = "$EXIT_SUCCESS" ]
    check "the sender's address book does not hold the receiver's key as office.pub" holds_key "$s/blesend/receivers" "$r/blesend/id.pub"
    check "the receiver's address book entry is not office.pub" [ -f "$s/blesend/receivers/office.pub" ]
    check "the receiver's trust directory does not hold the sender's key" holds_key "$r/blesend/trusted" "$s/blesend/id.pub"
    check "the trust directory is mode $(stat -c %a "$r/blesend/trusted"), want 700" [ "$(stat -c %a "$r/blesend/trusted")" = 700 ]
    check "no paired event from blesend" has_event "$SLOG.out" paired
    check "no paired event from blerecv" has_event "$PRLOG.out" paired
    echo "# METRIC pairing_s=$SEND_SECS"
    # The first file, by the name alone, into the default trust directory.
    RECV_LOG=$W/logs/recv-paired
    XDG_CONFIG_HOME=$r "$RECV" --adapter hci0 --trust "$r/blesend/trusted" --out "$W/out-paired" --once --json "${RECV_LINKS[@]}" \
      > "$RECV_LOG.out" 2> "$RECV_LOG.err" &
    RECV_PID=$!
    PIDS+=("$RECV_PID")
    if wait_for2 "$RECV_LOG.out" '"listening"' "$RECV_LOG.err" 'waiting for senders' 30 "$RECV_PID"; then
      SLOG=$W/logs/send-paired
      SRC=0
      XDG_CONFIG_HOME=$s timeout -k 5 90 "$SEND" --adapter hci1 --timeout 40 --to office "$W/files/k20.bin" > "$SLOG.out" 2> "$SLOG.err" || SRC=$?
      check "blesend --to office exit $SRC, want $EXIT_SUCCESS" [ "$SRC" = "$EXIT_SUCCESS" ]
      check "k20.bin differs or missing" same "$W/files/k20.bin" "$W/out-paired/k20.bin"
    else
      fail "blerecv with the trust directory pairing filled did not start: $(tail -n 2 "$RECV_LOG.err" | tr '\n' ' ')"
    fi
    wait_pid "$RECV_PID" 20
    RECV_PID=""
  else
    fail "blerecv pair showed no code: $(tail -n 3 "$PRLOG.err" | tr '\n' ' ')"
  fi
  end "$SLOG.err" "$PRLOG.err" "$RECV_LOG.err" "$W/logs/scan-pairing.err"

  begin "pairing: a wrong code pins nothing on either machine (blesend exits $EXIT_NOT_PAIRED, both say so); blerecv shows a new code after its pause, and that one pairs"
  local r2=$W/pair-r2 s2=$W/pair-s2 code2
  mkdir -p "$r2" "$s2"
  if pair_recv wrong "$r2" hci0; then
    pair_send wrong "$s2" hci1 "$(other_code "$PCODE")"
    check "blesend pair (wrong code) exit $SRC, want $EXIT_NOT_PAIRED" [ "$SRC" = "$EXIT_NOT_PAIRED" ]
    check "blesend does not say the code did not match" grep -q 'code did not match' "$SLOG.err"
    check "the sender pinned something" [ "$(pub_count "$s2/blesend/receivers")" = 0 ]
    check "the receiver trusted something" [ "$(pub_count "$r2/blesend/trusted")" = 0 ]
    wait_for "$PRLOG.out" '"pairing-failed"' 20 "$PRPID" || fail "blerecv did not say the attempt failed"
    wait_until 20 --pid "$PRPID" sh -c "[ \"\$(grep -c '\"pairing-code\"' '$PRLOG.out')\" -ge 2 ]" || fail "blerecv showed no new code"
    code2=$(pair_code 2 "$PRLOG.out")
    check "the new code is the old one" [ "$code2" != "$PCODE" ]
    pair_send retry "$s2" hci1 "$code2"
    check "blesend pair (the new code) exit $SRC, want $EXIT_SUCCESS" [ "$SRC" = "$EXIT_SUCCESS" ]
    wait_pid "$PRPID" 20; rrc=$WRC
    check "blerecv pair exit $rrc, want $EXIT_SUCCESS" [ "$rrc" = "$EXIT_SUCCESS" ]
    check "the receiver does not trust the sender after the second attempt" holds_key "$r2/blesend/trusted" "$s2/blesend/id.pub"
  else
    fail "blerecv pair showed no code"
  fi
  end "$SLOG.err" "$PRLOG.err"

  begin "pairing: a relay in the middle with keys of its own (on hci2) gets nothing pinned on either machine, and both users see the attempt fail"
  local r3=$W/pair-r3 s3=$W/pair-s3 m=$W/pair-m mr=$W/pair-mr rcode mrc
  mkdir -p "$r3" "$s3" "$m" "$mr"
  if pair_recv relay "$r3" hci0; then
    rcode=$PCODE
    # The relay's side that faces the receiver: a pairing sender with its own key and a guess.
    pair_send relay-to-recv "$m" hci2 "$(other_code "$rcode")"
    check "the relay (facing the receiver) exit $SRC, want $EXIT_NOT_PAIRED" [ "$SRC" = "$EXIT_NOT_PAIRED" ]
    wait_for "$PRLOG.out" '"pairing-failed"' 20 "$PRPID" || fail "the receiver's user was not told the attempt failed"
    check "the receiver trusted the relay's key" [ "$(pub_count "$r3/blesend/trusted")" = 0 ]
    kill -INT "$PRPID" 2>/dev/null
    wait_pid "$PRPID" 20
    check "blerecv pair (Ctrl-C) exit $WRC, want $EXIT_INTERRUPTED" [ "$WRC" = "$EXIT_INTERRUPTED" ]
    check "the receiver trusted something after Ctrl-C" [ "$(pub_count "$r3/blesend/trusted")" = 0 ]
    # The relay's side that faces the sender: a pairing receiver with its own key and code; the
    # sender's user types the code the real receiver showed.
    local saved=$PRLOG
    if pair_recv relay-as-recv "$mr" hci2; then
      pair_send relay "$s3" hci1 "$rcode"
      check "the sender (facing the relay) exit $SRC, want $EXIT_NOT_PAIRED" [ "$SRC" = "$EXIT_NOT_PAIRED" ]
      check "the sender's user is not told the code did not match" grep -q 'code did not match' "$SLOG.err"
      check "the sender pinned the relay's key" [ "$(pub_count "$s3/blesend/receivers")" = 0 ]
      check "the relay got the sender's key trusted" [ "$(pub_count "$mr/blesend/trusted")" = 0 ]
      kill -INT "$PRPID" 2>/dev/null
      wait_pid "$PRPID" 20; mrc=$WRC
      log "relay as receiver: exit $mrc"
    else
      fail "the relay's blerecv pair showed no code"
    fi
    end "$SLOG.err" "$saved.err" "$PRLOG.err"
  else
    fail "blerecv pair showed no code"
    end "$PRLOG.err"
  fi
}

log "e2e group '$GROUP', binaries in $BIN"
case "$GROUP" in
  main) run_main ;;
  mtu) run_mtu 1; run_att ;;
  all) run_mtu 0; run_main ;;
  discovery) run_discovery; run_receivers; run_pairing ;;
  pairing) run_pairing ;;
  receivers) run_receivers ;;
  busy) run_busy ;;
  cut) for _ in $(seq 1 "${E2E_REPEAT:-3}"); do run_cut; done ;;
  first-contact) run_first_contact ;;
  *) echo "e2e: unknown group $GROUP" >&2; exit 2 ;;
esac
json_logs_case
log "suite took $(elapsed "$T0")s"
echo "$PASS passed, $FAIL failed"
[ "$FAIL" = 0 ]

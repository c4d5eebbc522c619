#!/bin/bash
# How long a sender takes to learn it was refused, against a trusted 1-byte send, in ONE lab VM boot.
#
# Usage: scripts/lab-refusal.sh [--rounds K] [--cases "trusted stranger mismatch"] [vmrun options]
#   On the host it boots the VM through lab/run-suite.sh; inside the VM, one receiver on hci0
#   (key r, trusting s) and K rounds (default 5) of three sends from hci1, each timed from blesend's
#   start to its exit:
#     trusted   key s, pinned r: a 1-byte file arrives (exit 0)
#     stranger  key x, pinned r: the receiver holds the pinned key but does not trust x (exit 66)
#     mismatch  key s, pinned o: the receiver does not hold the pinned key (exit 66)
#   then one run of each with every stderr line (-vv) stamped in ms since start: the breakdown.
#   BLESEND_BASELINE=DIR also times the blesend in DIR (another build, e.g. main before a change)
#   in the same rounds, interleaved. Prints "# REFUSAL" lines: the medians and stranger/trusted.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROUNDS=5
CASES="trusted stranger mismatch"
vm_opts=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS=$2; shift;;
    --cases) CASES=$2; shift;;
    -h|--help) sed -n '2,13p' "$0"; exit 0;;
    *) vm_opts+=("$1");;
  esac
  shift
done
if [ "${BLESEND_LAB_BT:-}" != 1 ]; then
  exec "$ROOT/lab/run-suite.sh" --timeout 900 "${vm_opts[@]}" -- "$ROOT/scripts/lab-refusal.sh" --rounds "$ROUNDS" --cases "$CASES"
fi

# ---- inside the VM ----
BIN=${BLESEND_BIN:-$ROOT/.build/debug}
W=$(mktemp -d /run/blesend-refusal.XXXXXX)
RP=
cleanup() { [ -n "$RP" ] && kill "$RP" 2>/dev/null; rm -rf "$W"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }

for k in s r x o; do "$BIN/blesend" keygen -o "$W/$k" > /dev/null 2>&1 || { echo "keygen failed" >&2; exit 2; }; done
"$BIN/blerecv" trust "$W/s.pub" --name s --dir "$W/trust" > /dev/null 2>&1 || { echo "trust failed" >&2; exit 2; }
head -c 1 /dev/urandom > "$W/one.bin"
mkdir -p "$W/out"
"$BIN/blerecv" --adapter hci0 --state "$W/state" --key "$W/r" --trust "$W/trust" --out "$W/out" --json \
  > "$W/recv.out" 2> "$W/recv.err" &
RP=$!
for _ in $(seq 1 300); do grep -q '"listening"' "$W/recv.out" 2>/dev/null && break; sleep 0.1; done
grep -q '"listening"' "$W/recv.out" || { echo "blerecv did not start:" >&2; cat "$W/recv.err" >&2; exit 1; }

declare -A WANT=([trusted]=0 [stranger]=66 [mismatch]=66)
declare -A KEY=([trusted]=s [stranger]=x [mismatch]=s)
declare -A PIN=([trusted]=r [stranger]=r [mismatch]=o)
: > "$W/times"
fails=0
# once BUILD-NAME DIR CASE: one send, its time in $W/times ("build case ms")
once() {
  local t0 t1 rc=0
  t0=$(ms)
  "$2/blesend" --adapter hci1 --key "$W/${KEY[$3]}" --to "$W/${PIN[$3]}.pub" --timeout 20 "$W/one.bin" \
    > /dev/null 2> "$W/last.err" || rc=$?
  t1=$(ms)
  if [ "$rc" != "${WANT[$3]}" ]; then
    echo "refusal: $1 $3 exit $rc, want ${WANT[$3]}: $(tail -n 1 "$W/last.err")" >&2
    fails=$((fails + 1))
  fi
  echo "$1 $3 $((t1 - t0))" >> "$W/times"
  printf '# %-8s %-9s %5d ms  exit %s\n' "$1" "$3" $((t1 - t0)) "$rc"
  # A sender refused a moment ago is held off by the receiver for a while (backoff after a failed
  # handshake, 2 s doubling); wait it out so each send starts alike.
  sleep "$([ "$3" = trusted ] && echo 1 || echo 5)"
}
builds=("this $BIN")
[ -n "${BLESEND_BASELINE:-}" ] && builds+=("baseline $BLESEND_BASELINE")
for _ in $(seq 1 "$ROUNDS"); do
  for b in "${builds[@]}"; do
    for c in $CASES; do once ${b% *} "${b#* }" "$c"; done
  done
done

# The breakdown: each line of -vv with the ms since blesend started.
for c in $CASES; do
  t0=$(ms)
  "$BIN/blesend" --adapter hci1 --key "$W/${KEY[$c]}" --to "$W/${PIN[$c]}.pub" --timeout 20 -vv "$W/one.bin" 2>&1 > /dev/null |
    while IFS= read -r line; do printf '# breakdown %-9s %5d ms  %s\n' "$c" $(( $(ms) - t0 )) "${line:0:120}"; done
  printf '# breakdown %-9s %5d ms  (exit)\n' "$c" $(( $(ms) - t0 ))
  sleep 5
done

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print "n/a"; else if (NR % 2) print v[(NR + 1) / 2]; else print int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
for b in this baseline; do
  grep -q "^$b " "$W/times" || continue
  line="# REFUSAL $b:"
  for c in $CASES; do line+=" $c $(awk -v b="$b" -v c="$c" '$1 == b && $2 == c { print $3 }' "$W/times" | median) ms"; done
  tr=$(awk -v b="$b" '$1 == b && $2 == "trusted" { print $3 }' "$W/times" | median)
  st=$(awk -v b="$b" '$1 == b && $2 == "stranger" { print $3 }' "$W/times" | median)
  if [ "$tr" != n/a ] && [ "$st" != n/a ]; then
    line+="; stranger/trusted $(awk -v s="$st" -v t="$tr" 'BEGIN { printf "%.2f", s / t }')"
    line+="; stranger at most 3000 ms in $(awk -v b="$b" '$1 == b && $2 == "stranger" && $3 <= 3000' "$W/times" | wc -l) of $ROUNDS"
  fi
  echo "$line"
done
[ "$fails" = 0 ] || { echo "refusal: $fails send(s) ended with the wrong exit status" >&2; exit 1; }

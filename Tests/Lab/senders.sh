#!/bin/bash
# Several senders at one receiver (issue 22), on controllers that can hold two links at once:
#   BT_CONTROLLERS=bumble BT_NCTRL=3 lab/run-suite.sh [--image trixie] -- Tests/Lab/senders.sh
# (btvirt gives every link of a controller one handle: lab/README.md, "Two links on one controller").
# blerecv on hci0; trusted senders on hci1 (key sender) and hci2 (key other); a stranger's bare
# link from hci2 (Tests/Lab/hostile-central.py --mode bare); with BT_NCTRL=4, a third trusted
# sender on hci3 (key third) for the busy case (on demand: `senders.sh busy`, see there).
# Cases check what must hold (both files identical, nothing refused, served at the same time);
# the times are figures, printed as "# METRIC" lines (not pass/fail: the lab is slow and noisy).
set -uo pipefail
GROUP=senders
SUITE=senders
# shellcheck source=Tests/Lab/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
HOSTILE=$ROOT/Tests/Lab/hostile-central.py
"$RECV" trust "$W/keys/other.pub" --name other --dir "$W/trust" > /dev/null 2>&1
SIZE=$((300 * 1024))
mkdir -p "$W/files/a" "$W/files/b"
head -c "$SIZE" /dev/urandom > "$W/files/a/same.bin"
head -c "$SIZE" /dev/urandom > "$W/files/b/same.bin"
mkfile k20.bin $((20 * 1024))
"$SEND" keygen -o "$W/keys/third" > /dev/null 2>&1
"$RECV" trust "$W/keys/third.pub" --name third --dir "$W/trust" > /dev/null 2>&1

# other_bg NAME [blesend args]: blesend on hci2 with key "other", in the background; sets OPID, OLOG, O_T.
other_bg() {
  local name=$1; shift
  OLOG=$W/logs/send-$name
  : > "$OLOG.out"; : > "$OLOG.err"
  O_T=$(now)
  "$SEND" --adapter hci2 --key "$W/keys/other" --timeout 90 "$@" > "$OLOG.out" 2> "$OLOG.err" &
  OPID=$!
  PIDS+=("$OPID")
}
# both_served LOG: the receiver's -v log has two authenticated senders' channels open at once.
both_served() {
  awk '/ connected \[/ { open++; if (open >= 2) found = 1 } /admission: channel [0-9]+ ended \(its sender/ { open-- } END { exit !found }' "$1"
}
# timeline LOG: the receiver's admission decisions and senders, for the record.
timeline() { grep -E 'admission:|connected \[|received ' "$1" | sed 's/^/#   | /'; }

case_solo() {
  begin "one sender alone, then the other alone (the baselines)"
  local out=$W/out-solo
  start_recv solo "$out" -v || { fail "receiver did not start"; end; return; }
  send_run solo-a --json --to "$RPUB" "$W/files/a/same.bin"
  SOLO_A=$SEND_SECS
  check "sender a alone: exit $SRC, want $EXIT_SUCCESS" [ "$SRC" = "$EXIT_SUCCESS" ]
  rm -f "$out/same.bin"
  other_bg solo-b --json --to "$RPUB" "$W/files/b/same.bin"
  wait_pid "$OPID" 120
  SOLO_B=$(elapsed "$O_T")
  check "sender b alone: exit $WRC, want $EXIT_SUCCESS" [ "$WRC" = "$EXIT_SUCCESS" ]
  echo "# METRIC solo_a_s=$SOLO_A solo_b_s=$SOLO_B"
  stop_recv
  end "$SLOG.err" "$OLOG.err" "$RECV_LOG.err"
}

case_together() {
  begin "two trusted senders 1 s apart, the same file name: both arrive whole, served at once"
  local out=$W/out-together a_s b_s first second
  start_recv together "$out" -v || { fail "receiver did not start"; end; return; }
  send_bg together-a --json --to "$RPUB" "$W/files/a/same.bin"
  sleep 1
  other_bg together-b --json --to "$RPUB" "$W/files/b/same.bin"
  finish_send 150; a_s=$SEND_SECS
  wait_pid "$OPID" 150; b_s=$(elapsed "$O_T")
  check "sender a: exit $SRC, want $EXIT_SUCCESS" [ "$SRC" = "$EXIT_SUCCESS" ]
  check "sender b: exit $WRC, want $EXIT_SUCCESS" [ "$WRC" = "$EXIT_SUCCESS" ]
  # The same name from two senders: one keeps it, the other gets the next free number.
  first=$(ls "$out" | head -n 1); second=$(ls "$out" | sed -n 2p)
  check "received: $(ls "$out" | tr '\n' ' '), want same.bin and same-1.bin" [ "$(ls "$out" | tr '\n' ' ')" = "same-1.bin same.bin " ]
  check "a's file is not among the received" bash -c "cmp -s '$W/files/a/same.bin' '$out/same.bin' || cmp -s '$W/files/a/same.bin' '$out/same-1.bin'"
  check "b's file is not among the received" bash -c "cmp -s '$W/files/b/same.bin' '$out/same.bin' || cmp -s '$W/files/b/same.bin' '$out/same-1.bin'"
  timeline "$RECV_LOG.err"
  grep -hE 'warning|error' "$SLOG.err" "$OLOG.err" | sed 's/^/#   | /'
  check "the receiver never held both senders at once (served one after the other)" both_served "$RECV_LOG.err"
  check "a sender was refused" lacks "$RECV_LOG.err" 'admission: refused'
  echo "# METRIC together_a_s=$a_s together_b_s=$b_s solo_a_s=${SOLO_A:-?} solo_b_s=${SOLO_B:-?}"
  awk -v a="$a_s" -v b="$b_s" -v sa="${SOLO_A:-0}" -v sb="${SOLO_B:-0}" -v n="$SIZE" 'BEGIN {
    if (sa > 0 && sb > 0) printf "# METRIC together_ratio_a=%.2f together_ratio_b=%.2f aggregate_vs_solo=%.2f\n", a / sa, b / sb, (2 * n / (a > b + 1 ? a : b + 1)) / (n / sa) }'
  stop_recv
  end "$SLOG.err" "$OLOG.err" "$RECV_LOG.err"
}

case_bare_stranger() {
  begin "a stranger's bare link holds the receiver first: a trusted sender still gets through"
  local out=$W/out-bare hpid
  start_recv bare "$out" -v || { fail "receiver did not start"; end; return; }
  timeout -k 2 60 /usr/bin/python3 "$HOSTILE" --mode bare --adapter hci2 --hold 40 > "$W/logs/bare.out" 2> "$W/logs/bare.err" &
  hpid=$!
  PIDS+=("$hpid")
  wait_for "$W/logs/bare.out" '"event": "acquired"' 45 "$hpid" || fail "the stranger did not connect: $(tr '\n' ' ' < "$W/logs/bare.out")"
  send_run bare-next --json --to "$RPUB" "$W/files/k20.bin"
  check "trusted sender beside a bare link: exit $SRC, want $EXIT_SUCCESS" [ "$SRC" = "$EXIT_SUCCESS" ]
  check "k20.bin differs or missing" same "$W/files/k20.bin" "$out/k20.bin"
  wait_pid "$hpid" 40
  check "the stranger's bare link was not disconnected (exit $WRC)" [ "$WRC" = 0 ]
  check "receiver did not log the bare link's disconnection" grep -q 'admission: disconnected .*bareLink' "$RECV_LOG.err"
  echo "# METRIC beside_bare_link_s=$SEND_SECS bare_dropped_after_s=$(json_get "$W/logs/bare.out" dropped after_s)"
  stop_recv
  end "$W/logs/bare.out" "$SLOG.err" "$RECV_LOG.err"
}

# On demand, not in CASES: it cannot pass on this lab's controllers yet. With two links up,
# bluetoothd refused blerecv a third advertisement instance on trixie with bumble's controllers
# ("bluetoothd gives no more advertisement instances: with 2 links up ...", 2026-11-27), so the
# third sender found nothing until a slot was free and was served then, never told busy. The
# busy answer itself is tested in memory (BusyEndToEndTests, ReceiverServerTests, busy.vec).
case_busy() {
  begin "--max-links 2, both slots busy: a third trusted sender is told busy, waits, and gets its file through"
  local out=$W/out-busy tlog=$W/logs/send-busy-third tpid t_t
  [ -e /sys/class/bluetooth/hci3 ] || { fail "no hci3 (BT_NCTRL=4 needed)"; end; return; }
  start_recv busy "$out" -v --max-links 2 || { fail "receiver did not start"; end; return; }
  send_bg busy-a --json --to "$RPUB" "$W/files/a/same.bin"
  sleep 1   # two centrals answering one advertisement: the second one's connect fails (lab/README.md, bumble fix 2)
  other_bg busy-b --json --to "$RPUB" "$W/files/b/same.bin"
  # Both authenticated: every slot is taken.
  wait_until 60 lines_at_least "$RECV_LOG.err" ' connected \[' 2 || fail "the two senders did not both connect"
  t_t=$(now)
  "$SEND" --adapter hci3 --key "$W/keys/third" --timeout 150 --json --to "$RPUB" "$W/files/k20.bin" > "$tlog.out" 2> "$tlog.err" &
  tpid=$!
  PIDS+=("$tpid")
  finish_send 180
  wait_pid "$OPID" 180; local brc=$WRC
  wait_pid "$tpid" 180; local trc=$WRC third_s; third_s=$(elapsed "$t_t")
  check "sender a: exit $SRC, want $EXIT_SUCCESS" [ "$SRC" = "$EXIT_SUCCESS" ]
  check "sender b: exit $brc, want $EXIT_SUCCESS" [ "$brc" = "$EXIT_SUCCESS" ]
  check "third sender: exit $trc, want $EXIT_SUCCESS" [ "$trc" = "$EXIT_SUCCESS" ]
  check "k20.bin differs or missing" same "$W/files/k20.bin" "$out/k20.bin"
  check "the third sender was never told busy (no busy event with 'ahead')" grep -qE '"event": ?"busy".*"ahead": ?[0-9]' "$tlog.out"
  check "the receiver did not log a busy answer" grep -q 'admission: answering .* busy' "$RECV_LOG.err"
  timeline "$RECV_LOG.err"
  grep -hE 'busy|warning|error' "$tlog.err" | sed 's/^/#   | /'
  echo "# METRIC busy_third_total_s=$third_s busy_answers=$(count_event "$tlog.out" busy)"
  stop_recv
  end "$SLOG.err" "$OLOG.err" "$tlog.err" "$RECV_LOG.err"
}

CASES=(solo together bare_stranger)
if [ $# -gt 0 ]; then CASES=("$@"); fi
for c in "${CASES[@]}"; do "case_$c"; done
log "suite took $(elapsed "$T0")s"
echo "$PASS passed, $FAIL failed"
[ "$FAIL" = 0 ]

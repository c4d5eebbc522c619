#!/bin/bash
# Two centrals connect to one receiver at the same moment (issue 22's kernel question: did the
# 6.1 kernel's hci_chan_del BUG need dual-mode controllers, or do simultaneous LE connections hit it
# too?). Needs three LE-only controllers: BTVIRT_ARGS='-L -l3' BT_NCTRL=3 lab/run-suite.sh -- Tests/Lab/two-centrals.sh [ROUNDS]
# blerecv on hci0; blesend on hci1 (key sender) and on hci2 (key other), started together, each
# round; half the rounds kill both senders 0.3-1.5 s in (links torn down together). After every
# round: the kernel log for BUG/Oops/list corruption, and whether bluetoothd still runs.
set -uo pipefail
GROUP=two-centrals
SUITE=probe
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
ROUNDS=${1:-12}
"$RECV" trust "$W/keys/other.pub" --name other --dir "$W/trust" > /dev/null 2>&1
mkfile k20.bin $((20 * 1024))
out=$W/out; mkdir -p "$out"
start_recv probe "$out" -v || { echo "receiver did not start"; exit 2; }
btd=$(pidof bluetoothd)
bugs=0
for r in $(seq 1 "$ROUNDS"); do
  t=$(now)
  "$SEND" --adapter hci1 --key "$W/keys/sender" --timeout 40 --to "$RPUB" "$W/files/k20.bin" > "$W/logs/s1-$r.out" 2> "$W/logs/s1-$r.err" &
  p1=$!
  "$SEND" --adapter hci2 --key "$W/keys/other" --timeout 40 --to "$RPUB" "$W/files/k20.bin" > "$W/logs/s2-$r.out" 2> "$W/logs/s2-$r.err" &
  p2=$!
  how=complete
  if [ $((r % 2)) = 0 ]; then
    sleep "$(awk -v r="$r" 'BEGIN { srand(r); printf "%.1f", 0.3 + rand() * 1.2 }')"
    kill -9 "$p1" "$p2" 2>/dev/null
    how="both killed"
  fi
  wait "$p1"; rc1=$?
  wait "$p2"; rc2=$?
  sleep 2
  k=$(dmesg | grep -cE 'BUG|Oops|list_del corruption|list_add corruption|general protection|segfault|traps:')
  alive=yes; [ "$(pidof bluetoothd)" = "$btd" ] || alive="NO (was $btd, now $(pidof bluetoothd))"
  echo "# round $r ($how): hci1 exit $rc1, hci2 exit $rc2, $(elapsed "$t") s; kernel BUG lines $k; bluetoothd same pid: $alive; links hci0: $(hcitool -i hci0 con | grep -c handle)"
  [ "$k" -gt 0 ] && { bugs=1; dmesg | grep -B5 -A30 -E 'BUG|Oops' | head -80; break; }
  if [ "$alive" != yes ]; then
    echo "# bluetoothd gone; its log ends:"; tail -n 25 "${LOGDIR:-/run/blesend-lab}/bluetoothd.log" 2>/dev/null | sed 's/^/#   | /'
    echo "# kernel log ends:"; dmesg | tail -n 15 | sed 's/^/#   | /'
    bugs=1; break
  fi
  sleep 1
done
stop_recv
ls "$out" | sed 's/^/# received: /'
echo "# receiver log tail:"; tail -n 15 "$RECV_LOG.err" | sed 's/^/#   | /'
[ "$bugs" = 0 ] && echo "ok - no kernel BUG, bluetoothd alive, in $ROUNDS rounds" || echo "not ok - a kernel BUG or bluetoothd gone (above)"

#!/bin/bash
# The guest half of Tests/Lab/power-loss.sh (run by it through lab/run-suite.sh, with the
# persistent disk as /dev/vda): blerecv and blesend keep everything on that disk (keys, trust,
# the files, blerecv's output folder and state, blesend's state).
#   first  make the file system's contents (keys, an 8 MiB file, a folder of 11 MiB in 14 files),
#          sync them, start blerecv, send the file or the folder ($BLESEND_POWER_WHAT: file, the
#          default, or folder); the host kills the VM mid-transfer, as a power cut would (nothing
#          synced after that).
#   again  the disk as the cut left it: start blerecv (it must start, and says what it kept),
#          send again, check what arrived; prints one "RESULT ..." line.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BIN=${BLESEND_BIN:-$ROOT/.build/debug}
OUT=${BLESEND_LAB_OUT:?run me through lab/run-suite.sh}
P=/mnt/persistent
phase=${1:?first or again}
WHAT=${BLESEND_POWER_WHAT:-file}
case "$WHAT" in
  file) SRC=$P/files/m8.bin;;
  folder) SRC=$P/files/photos;;
  *) echo "power-loss: BLESEND_POWER_WHAT is file or folder, not $WHAT"; exit 2;;
esac
NAME=$(basename "$SRC")

modprobe -a virtio_blk ext4 2>/dev/null
for _ in $(seq 50); do [ -b /dev/vda ] && break; sleep 0.1; done
[ -b /dev/vda ] || { echo "power-loss: no /dev/vda (BLESEND_LAB_DISK unset?)"; exit 2; }
mkdir -p "$P"
mount -t ext4 /dev/vda "$P" || { echo "power-loss: cannot mount /dev/vda"; exit 2; }

start_recv() {   # start_recv NAME: blerecv on hci0, until it listens (30 s)
  "$BIN/blerecv" --adapter hci0 --trust "$P/trust" --key "$P/keys/receiver" --out "$P/out" --state "$P/rstate" \
    --json -v > "$OUT/recv-$1.out" 2> "$OUT/recv-$1.err" &
  RECV_PID=$!
  for _ in $(seq 300); do
    grep -q '"listening"' "$OUT/recv-$1.out" 2>/dev/null && return 0
    kill -0 "$RECV_PID" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}
send() {   # send NAME: blesend on hci1, its JSON in $OUT/send-NAME.out
  timeout 300 "$BIN/blesend" --adapter hci1 --key "$P/keys/sender" --to "$P/keys/receiver.pub" --state "$P/sstate" --json --no-compress \
    "$SRC" > "$OUT/send-$1.out" 2> "$OUT/send-$1.err"
}

case "$phase" in
  first)
    mkdir -p "$P/keys" "$P/trust" "$P/out" "$P/rstate" "$P/sstate" "$P/files"
    "$BIN/blesend" keygen -o "$P/keys/sender" > /dev/null 2>&1 || exit 2
    "$BIN/blesend" keygen -o "$P/keys/receiver" > /dev/null 2>&1 || exit 2
    "$BIN/blerecv" trust "$P/keys/sender.pub" --name sender --dir "$P/trust" > /dev/null 2>&1 || exit 2
    head -c $((8 * 1024 * 1024)) /dev/urandom > "$P/files/m8.bin"
    # A folder of about 11 MiB: 14 files of 161 KiB to 1.4 MiB in three levels, and an empty one.
    mkdir -p "$P/files/photos/2024/summer" "$P/files/photos/2025" "$P/files/photos/empty"
    for i in $(seq 1 14); do
      case $((i % 3)) in 0) d=photos;; 1) d=photos/2024/summer;; 2) d=photos/2025;; esac
      head -c $(( (64 + (i * 97) % 1472) * 1024 )) /dev/urandom > "$P/files/$d/img-$i.jpg"
    done
    # The machine's own files are on disk before the transfer: the cut is to test blesend's.
    sync
    start_recv first || { echo "power-loss: blerecv did not start"; cat "$OUT/recv-first.err"; exit 2; }
    echo "power-loss: sending"
    send first
    echo "power-loss: the transfer ended (exit $?) before the host cut the power"
    exit 3
    ;;
  again)
    left=$(ls -A "$P/out" | tr '\n' ' ')
    if ! start_recv again; then
      echo "RESULT start=failed"; sed 's/^/#   | /' "$OUT/recv-again.err" | tail -n 20
      exit 1
    fi
    kept=$(grep -o '[0-9]* partial file(s) or folder(s) of an earlier run kept' "$OUT/recv-again.err" | grep -o '^[0-9]*')
    send again; src=$?
    resumed=$(grep -o '"event":"resumed"[^}]*"offset":[0-9]*' "$OUT/send-again.out" | grep -o '[0-9]*$' | head -n 1)
    same() { if [ -d "$1" ]; then diff -r -q "$1" "$2" > /dev/null 2>&1; else cmp -s "$1" "$2"; fi; }
    identical=no; same "$SRC" "$P/out/$NAME" && identical=yes
    # A visible entry whose contents are not the source's is a wrong file (or folder). A second
    # identical copy (m8-1.bin, photos-1) is a duplicate: it was stored just before the cut, and
    # its sender, which never heard so, sent it again to a receiver that no longer remembered it.
    wrong=0 duplicates=0
    for f in "$P"/out/*; do
      [ -e "$f" ] || continue
      if ! same "$SRC" "$f"; then wrong=$((wrong + 1))
      elif [ "$f" != "$P/out/$NAME" ]; then duplicates=$((duplicates + 1)); fi
    done
    kill "$RECV_PID" 2>/dev/null; wait "$RECV_PID" 2>/dev/null
    echo "# out/ after the cut: ${left:-(empty)}"
    echo "RESULT what=$WHAT start=ok kept=${kept:-0} send_exit=$src resumed=${resumed:-0} identical=$identical wrong=$wrong duplicates=$duplicates"
    [ "$src" = 0 ] && [ "$identical" = yes ] && [ "$wrong" = 0 ]
    ;;
esac

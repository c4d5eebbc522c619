#!/bin/bash
# Power loss, on demand (issue 23): a benchmark-style run of N random moments, not part of CI.
#
# Usage (host, as root):  BLESEND_BIN=$PWD/.build-static/release Tests/Lab/power-loss.sh [N] [--image trixie]
#                                                                      [--folder | --both]
# --folder sends a folder of 11 MiB in 14 files (three levels, an empty folder) instead of the file;
# --both alternates (odd moments the file, even ones the folder). A folder's cut comes at a random
# 0.5-10 s after its first progress event (its progress is per file, so a share of it means little;
# the folder takes about 12-17 s on trixie once disk work is off the pump, so later cuts missed it).
#
# For each moment: a fresh 256 MiB ext4 disk image (a file-backed virtio disk, not the RAM
# overlay) holds the keys, an 8 MiB file, blerecv's output folder and state, and blesend's state.
# Boot 1 (power-loss-guest.sh first) starts blerecv and sends; once the sender reports a random
# 10-90 % of the file acknowledged, plus a random 0-1.5 s, this script kills QEMU with SIGKILL:
# nothing the guest had not synced reaches the disk. Boot 2 (again) mounts the disk as the cut
# left it, starts blerecv and sends again. Prints one line per moment and the totals: wrong files
# committed (must be 0), blerecv failing to start (must be 0), files resumed and the bytes they
# resumed from. Exit status 1 if any moment ended in a wrong file, a failed start or a failed send.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
WORK=${BLESEND_LAB_WORK:-${XDG_CACHE_HOME:-$HOME/.cache}/blesend-lab}
N=10 VMOPTS=() WHAT=file
while [ $# -gt 0 ]; do
  case "$1" in
    --image) VMOPTS+=(--image "$2"); shift;;
    --folder) WHAT=folder;;
    --both) WHAT=both;;
    [0-9]*) N=$1;;
    *) echo "usage: power-loss.sh [N] [--image trixie] [--folder | --both]" >&2; exit 2;;
  esac
  shift
done
SIZE=$((8 * 1024 * 1024))
bad=0 wrong=0 duplicates=0 failed_starts=0 resumed_files=0 resumed_list=""

progress() {   # progress FILE: the highest "bytes" of a progress event in blesend's JSON
  grep -o '"event":"progress"[^}]*"bytes":[0-9]*' "$1" 2>/dev/null | grep -o '[0-9]*$' | sort -n | tail -n 1
}

for i in $(seq 1 "$N"); do
  disk=$(mktemp /var/tmp/blesend-power.XXXXXX.img)
  truncate -s 256M "$disk" && mkfs.ext4 -q -F "$disk" || { echo "power-loss: mkfs failed"; exit 2; }
  what=$WHAT
  [ "$what" = both ] && { [ $((i % 2)) = 1 ] && what=file || what=folder; }
  export BLESEND_POWER_WHAT=$what
  if [ "$what" = folder ]; then
    target=1 extra_ms=$(( 500 + RANDOM % 9500 ))   # any progress, then 0.5-10 s
  else
    target=$(( SIZE * (10 + RANDOM % 81) / 100 ))
    extra_ms=$(( RANDOM % 1500 ))
  fi
  before=$(ls -d "$WORK"/runs/run.* 2>/dev/null | sort)
  BLESEND_LAB_DISK=$disk "$ROOT/lab/run-suite.sh" "${VMOPTS[@]}" --timeout 300 -- Tests/Lab/power-loss-guest.sh first \
    > "/tmp/power-loss-$i-first.log" 2>&1 &
  vm=$!
  run=""
  for _ in $(seq 600); do
    [ -z "$run" ] && run=$(comm -13 <(echo "$before") <(ls -d "$WORK"/runs/run.* 2>/dev/null | sort) | head -n 1)
    [ -n "$run" ] && [ "$(progress "$run/send-first.out")" -ge "$target" ] 2>/dev/null && break
    kill -0 "$vm" 2>/dev/null || break
    sleep 0.2
  done
  at=$(progress "$run/send-first.out" 2>/dev/null)
  sleep "$(awk -v ms="$extra_ms" 'BEGIN { printf "%.3f", ms / 1000 }')"
  if pkill -9 -f "qemu-system.*$disk"; then cut=yes; else cut=no; fi
  wait "$vm" 2>/dev/null
  if [ "$cut" = no ]; then
    echo "moment $i: the power was not cut (the first boot ended by itself: see /tmp/power-loss-$i-first.log)"
    bad=$((bad + 1)); rm -f "$disk"; continue
  fi
  BLESEND_LAB_DISK=$disk "$ROOT/lab/run-suite.sh" "${VMOPTS[@]}" --timeout 400 -- Tests/Lab/power-loss-guest.sh again \
    > "/tmp/power-loss-$i-again.log" 2>&1
  rc=$?
  result=$(grep -m1 '^RESULT' "/tmp/power-loss-$i-again.log")
  echo "moment $i ($what): cut at ${at:-0} bytes acknowledged (target $target, +${extra_ms} ms); ${result:-no result (exit $rc)}"
  case "$result" in *start=failed*|"") failed_starts=$((failed_starts + 1));; esac
  w=$(sed -n 's/.* wrong=\([0-9]*\).*/\1/p' <<< "$result"); wrong=$((wrong + ${w:-0}))
  d=$(sed -n 's/.* duplicates=\([0-9]*\).*/\1/p' <<< "$result"); duplicates=$((duplicates + ${d:-0}))
  r=$(sed -n 's/.* resumed=\([0-9]*\).*/\1/p' <<< "$result")
  if [ "${r:-0}" -gt 0 ]; then resumed_files=$((resumed_files + 1)); resumed_list="$resumed_list ${r}"; fi
  [ "$rc" = 0 ] || bad=$((bad + 1))
  rm -f "$disk"
done
echo "# power loss: $N moments; wrong files committed $wrong; identical copies stored twice $duplicates; blerecv failed to start $failed_starts; resumed $resumed_files (from bytes:${resumed_list:- none}); moments not ok $bad"
[ "$bad" = 0 ] && [ "$wrong" = 0 ] && [ "$failed_starts" = 0 ]

#!/usr/bin/env bash
# The demo (README): on a fresh Debian 12 machine, as root: install what is needed, build, boot
# the VM lab (real bluetoothd, two virtual LE controllers), make two key pairs, and send a real
# file from hci1 (blesend) to hci0 (blerecv), showing progress and the result.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${BLESEND_DEMO_IN_VM:-}" != 1 ]; then
  scripts/setup.sh
  swift build
  exec env BLESEND_DEMO_IN_VM=1 BLESEND_LAB_PASSENV="TERM" lab/run-suite.sh -- "$PWD/scripts/demo.sh"
fi

# --- inside the VM from here on ---
bin=$PWD/.build/debug
work=$(mktemp -d /run/blesend-demo.XXXXXX)
trap 'kill "${receiver_pid:-}" 2>/dev/null || true' EXIT
echo "== two key pairs"
"$bin/blesend" keygen -o "$work/sender" >/dev/null
"$bin/blesend" keygen -o "$work/receiver" >/dev/null
"$bin/blerecv" trust "$work/sender.pub" --name demo-sender --dir "$work/trusted"
mkdir -p "$work/inbox"
head -c 300000 /dev/urandom > "$work/photo.jpg"

echo "== blerecv on hci0"
"$bin/blerecv" --adapter hci0 --key "$work/receiver" --trust "$work/trusted" --out "$work/inbox" --once -v &
receiver_pid=$!
sleep 2
echo "== blesend on hci1"
# `script` gives blesend a terminal, so it draws its progress line.
script -qefc "$bin/blesend --adapter hci1 --key $work/sender --to $work/receiver.pub $work/photo.jpg -v" /dev/null
wait "$receiver_pid"
echo "== result"
ls -l "$work/inbox"
cmp "$work/photo.jpg" "$work/inbox/photo.jpg" && echo "demo: photo.jpg arrived byte-identical"

#!/bin/bash
# blesend lab: run a whole test suite against real BlueZ in ONE VM boot (what CI uses).
#
# Usage: run-suite.sh [vmrun options] -- command [args...]
#   e.g. lab/run-suite.sh -- .build/debug/blesendPackageTests.xctest
#        BLESEND_BIN=$PWD/.build-static/release lab/run-suite.sh --image trixie -- Tests/Lab/e2e.sh main
#        lab/run-suite.sh --timeout 900 -- bash -c 'make e2e'
#
# Boots the VM (vmrun.sh), runs bt-up.sh (dbus + btvirt hci0/hci1 + bluetoothd), exports
# BLESEND_LAB_BT=1 and runs the command. On failure it prints the tails of the bluetoothd and
# btvirt logs plus the kernel's Bluetooth messages, and copies the logs into the run folder
# (kept on the host under $BLESEND_LAB_WORK/runs/). Exit status: the command's; 123 if
# Bluetooth did not come up; otherwise as vmrun.sh (124 timeout, 125 VM died). Boots on one
# machine take turns (a lock file, $BLESEND_LAB_LOCK or /tmp/blesend-lab.lock).
set -euo pipefail
LAB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if [ "${1:-}" != --in-guest ]; then
  opts=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
  [ "${1:-}" = -- ] && shift
  [ $# -gt 0 ] || { echo "usage: run-suite.sh [vmrun options] -- command [args...]" >&2; exit 2; }
  # One VM at a time on this machine (the lab is CPU-bound): wait for any other boot to finish.
  exec 9> "${BLESEND_LAB_LOCK:-/tmp/blesend-lab.lock}"
  if ! flock -n 9; then
    echo "run-suite: another lab VM is running; waiting for it" >&2
    flock 9
  fi
  exec "$LAB/vmrun.sh" "${opts[@]}" -- "$LAB/run-suite.sh" --in-guest "$@"
fi

# ---- inside the VM ----
shift
LOGDIR=/run/blesend-lab
save_logs() {
  local out=${BLESEND_LAB_OUT:-}
  [ -n "$out" ] && [ -d "$out" ] || return 0
  cp "$LOGDIR"/*.log "$out/" 2>/dev/null || true
  [ -f "$LOGDIR/btmon.snoop" ] && cp "$LOGDIR/btmon.snoop" "$out/"
  dmesg > "$out/dmesg.txt" 2>/dev/null || true
}
show_logs() {
  if [ -d /run/systemd/system ]; then
    echo "==== bluetooth.service journal (last 80 lines)"; journalctl -b --no-pager -o cat -n 80 -u bluetooth.service || true
  else
    echo "==== bluetoothd.log (last 80 lines)"; tail -n 80 "$LOGDIR/bluetoothd.log" 2>/dev/null || true
  fi
  echo "==== btvirt.log (last 20 lines)"; tail -n 20 "$LOGDIR/btvirt.log" 2>/dev/null || true
  [ -f "$LOGDIR/btattach.log" ] && { echo "==== btattach.log (bumble controllers; their own log is bumble.log in the run folder)"; tail -n 20 "$LOGDIR/btattach.log"; }
  echo "==== dmesg (bluetooth, last 20 lines)"; dmesg | grep -iE 'bluetooth|hci[0-9]|vhci|BUG|Oops' | tail -n 20 || true
}

if ! "$LAB/bt-up.sh"; then
  echo "run-suite: Bluetooth did not come up; not running the suite" >&2
  save_logs
  exit 123
fi
export BLESEND_LAB_BT=1
rc=0
"$@" || rc=$?
if [ "$rc" != 0 ]; then
  echo "run-suite: command failed with exit status $rc" >&2
  show_logs
  save_logs
fi
[ -n "${BT_MON:-}" ] && save_logs   # keep the trace when one was asked for
exit "$rc"

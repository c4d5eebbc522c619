#!/bin/bash
# Host side: build, prepare the lab, run the end-to-end and fault suites in the VM (three boots).
#
# Usage: scripts/lab-tests.sh [--no-build] [--goodput] [vmrun options]
#   boot 1: default main.conf          -> Tests/Lab/e2e.sh main  (every case but the MTU one)
#   boot 2: [GATT] ExchangeMTU=48      -> Tests/Lab/e2e.sh mtu   (forced small MTU)
#   boot 3: default main.conf          -> Tests/Lab/faults.sh    (faults, attacks, soak; ~6-8 min)
#   --goodput: a further boot runs scripts/lab-goodput.sh (blesend vs raw-stream, same boot)
# Exit status: 0 if every boot passed, else the first failing boot's status.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 2
build=1
goodput=0
vm_opts=()
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) build=0;;
    --goodput) goodput=1;;
    -h|--help) sed -n '2,10p' "$0"; exit 0;;
    *) vm_opts+=("$1");;
  esac
  shift
done

if [ "$build" = 1 ]; then
  echo "== swift build"
  swift build || { echo "lab-tests: swift build failed" >&2; exit 1; }
fi
echo "== lab/setup.sh"
lab/setup.sh || { echo "lab-tests: lab/setup.sh failed" >&2; exit 1; }

rc=0
step() {   # step NAME command...
  local name=$1; shift
  echo "== $name"
  local start=$SECONDS r=0
  "$@" || r=$?
  echo "== $name: exit $r after $((SECONDS - start)) s"
  [ "$rc" = 0 ] && [ "$r" != 0 ] && rc=$r
  return 0
}
step "e2e main (default main.conf)" \
  lab/run-suite.sh --timeout 900 "${vm_opts[@]}" -- Tests/Lab/e2e.sh main
step "e2e mtu (ExchangeMTU=48)" \
  env BT_MAINCONF='[GATT]\nExchangeMTU=48' lab/run-suite.sh --timeout 600 "${vm_opts[@]}" -- Tests/Lab/e2e.sh mtu
step "faults (default main.conf)" \
  lab/run-suite.sh --timeout 900 "${vm_opts[@]}" -- Tests/Lab/faults.sh
if [ "$goodput" = 1 ]; then
  step "goodput (blesend vs raw-stream)" \
    lab/run-suite.sh --timeout 900 "${vm_opts[@]}" -- scripts/lab-goodput.sh
fi
[ "$rc" = 0 ] && echo "lab-tests: all passed" || echo "lab-tests: FAILED (exit $rc)" >&2
exit "$rc"

#!/usr/bin/env bash
# The test command (README "Test", and what CI runs): set up, build, run the unit tests, fuzz every
# target for a short bounded time, then the end-to-end tests against real bluetoothd in the VM lab.
# The lab's Debian 13 image (debootstrap: mostly downloading and unpacking) is made in the
# background while the Swift build runs; each stage prints when it starts.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
stage() { echo "== $* (at $((SECONDS - start)) s)"; }

BLESEND_SETUP_TRIXIE=0 scripts/setup.sh
trixie_log=$(mktemp "${TMPDIR:-/tmp}/blesend-trixie-setup.XXXXXX")
stage "lab/setup.sh --image trixie, in the background (log: $trixie_log)"
lab/setup.sh --image trixie > "$trixie_log" 2>&1 &
trixie_setup=$!
trap 'kill "$trixie_setup" 2>/dev/null || true' EXIT   # a failed build ends it too
stage "swift build --build-tests"
swift build --build-tests
if ! wait "$trixie_setup"; then
  cat "$trixie_log" >&2
  echo "test: lab/setup.sh --image trixie failed" >&2
  exit 1
fi
stage "lab/setup.sh --image trixie finished: $(tail -n 1 "$trixie_log")"
rm -f "$trixie_log"
stage "unit tests"
swift test --skip-build --parallel
stage "fuzz (libFuzzer, ${FUZZ_SECONDS:-20} s per target; docs/fuzzing.md)"
scripts/fuzz.sh --time "${FUZZ_SECONDS:-20}"
stage "lab tests (real BlueZ in a VM)"
scripts/lab-tests.sh
echo "test: all done in $((SECONDS - start)) s"

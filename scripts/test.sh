#!/usr/bin/env bash
# The test command (README "Test", and what CI runs): set up, build, run the unit tests, fuzz every
# target for a short bounded time, then the end-to-end tests against real bluetoothd in the VM lab.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS

scripts/setup.sh
swift build --build-tests
echo "== unit tests"
swift test --skip-build --parallel
echo "== fuzz (libFuzzer, ${FUZZ_SECONDS:-20} s per target; docs/fuzzing.md)"
scripts/fuzz.sh --time "${FUZZ_SECONDS:-20}"
echo "== lab tests (real BlueZ in a VM)"
scripts/lab-tests.sh
echo "test: all done in $((SECONDS - start)) s"

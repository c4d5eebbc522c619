#!/usr/bin/env bash
# The test command (README "Test", and what CI runs): set up, build, run the end-to-end tests
# against real bluetoothd in the VM lab, the unit tests, and fuzz every target for a short bounded
# time. Each stage prints when it starts.
#
# The machine has two cores and the lab's VM (one TCG vCPU) keeps one of them busy from the first
# boot to the last: the VM is the critical path. So the release binaries the lab runs (both images:
# scripts/build-static.sh) are built first, on both cores, beside the lab's Debian 13 image
# (debootstrap, mostly downloading and unpacking); then the VM boots one after another while the
# rest runs on the other core (pinned to it), one compiler job at a time: the debug build with
# the tests, the unit tests, then the fuzzing. Their results are reported after the lab's.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
stage() { echo "== $* (at $((SECONDS - start)) s)"; }
logs=$(mktemp -d "${TMPDIR:-/tmp}/blesend-test.XXXXXX")
background=()
killtree() { local child; for child in $(pgrep -P "$1"); do killtree "$child"; done; kill "$1" 2>/dev/null || true; }
trap 'for p in "${background[@]}"; do killtree "$p"; done' EXIT   # a failed stage ends them too

BLESEND_SETUP_TRIXIE=0 scripts/setup.sh
stage "lab/setup.sh --image trixie, in the background (log: $logs/trixie-setup.log)"
lab/setup.sh --image trixie > "$logs/trixie-setup.log" 2>&1 &
trixie_setup=$!
background+=("$trixie_setup")
stage "scripts/build-static.sh (the release binaries both lab images run)"
scripts/build-static.sh

# In the background: each stage leaves its exit status in a file (NAME.rc) and its output in NAME.log.
stage "in the background, on the last core, one job: swift build --build-tests, the unit tests, then scripts/fuzz.sh (logs: $logs)"
# Pinned to the last core: the compiler jobs SwiftPM starts do not keep the nice value, and the VM
# must not share its core (under load its controllers' HCI_Reset timed out and a boot failed).
pin=()
if [ "$(nproc)" -ge 2 ] && command -v taskset > /dev/null; then pin=(taskset -c "$(( $(nproc) - 1 ))"); fi
(
  run() { local name=$1 rc=0; shift; nice -n 19 "${pin[@]}" "$@" > "$logs/$name.log" 2>&1 || rc=$?; echo "$rc" > "$logs/$name.rc"; return "$rc"; }
  if run build swift build --build-tests --jobs 1; then
    run unit swift test --skip-build --parallel || true
  fi
  BLESEND_BUILD_JOBS=1 run fuzz scripts/fuzz.sh --jobs 1 --time "${FUZZ_SECONDS:-20}" || true
) &
helpers=$!
background+=("$helpers")

rc=0
stage "lab tests on the host image (real BlueZ in a VM)"
scripts/lab-tests.sh --no-build --release --images host --soak-on trixie --package-on "" || rc=$?

stage "waiting for lab/setup.sh --image trixie"
if ! wait "$trixie_setup"; then
  cat "$logs/trixie-setup.log" >&2
  echo "test: lab/setup.sh --image trixie failed" >&2
  exit 1
fi
echo "$(tail -n 1 "$logs/trixie-setup.log")"
stage "lab tests on the trixie image, and the package"
scripts/lab-tests.sh --no-build --images trixie --soak-on trixie || { r=$?; [ "$rc" = 0 ] && rc=$r; }

stage "waiting for the unit tests and the fuzzing"
wait "$helpers" || true
# report NAME WHAT [LINES]: the end of NAME's log (LINES, default all), all of it if NAME failed;
# a failure (or no status at all) fails the test command.
report() {
  echo "== $2"
  if [ "$(cat "$logs/$1.rc" 2>/dev/null)" = 0 ]; then
    tail -n "${3:-+1}" "$logs/$1.log"
  else
    cat "$logs/$1.log" 2>/dev/null || echo "(no output)"
    echo "test: $2 failed" >&2
    [ "$rc" = 0 ] && rc=1
  fi
  return 0
}
report build "swift build --build-tests" 1
[ "$(cat "$logs/build.rc" 2>/dev/null)" = 0 ] && report unit "unit tests (swift test)" 3
report fuzz "fuzzing (scripts/fuzz.sh)"
[ "$rc" = 0 ] || { echo "test: FAILED (exit $rc) after $((SECONDS - start)) s" >&2; exit "$rc"; }
rm -rf "$logs"
echo "test: all done in $((SECONDS - start)) s"

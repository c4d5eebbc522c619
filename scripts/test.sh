#!/usr/bin/env bash
# The test command (README "Test", and what CI runs): set up, build, run the unit tests, then the
# end-to-end tests against real bluetoothd in the VM lab, and fuzz every target for a short bounded
# time. Each stage prints when it starts.
#
# The machine has two cores and the lab's VM (one TCG vCPU) keeps only one of them busy, so work
# that needs no radio runs beside it on the other, one compiler job at a time at nice 19: the lab's
# Debian 13 image (debootstrap, mostly downloading and unpacking) beside the Swift build, and the
# static release build (for that image) and then the fuzzing beside the host image's boots.
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
stage "swift build --build-tests"
swift build --build-tests
if ! wait "$trixie_setup"; then
  cat "$logs/trixie-setup.log" >&2
  echo "test: lab/setup.sh --image trixie failed" >&2
  exit 1
fi
stage "lab/setup.sh --image trixie finished: $(tail -n 1 "$logs/trixie-setup.log")"

stage "unit tests"
swift test --skip-build --parallel

# In the background: the static build, then fuzzing; each leaves its exit status in a file.
stage "in the background, nice 19, one job: scripts/build-static.sh, then scripts/fuzz.sh (logs: $logs)"
(
  rc=0; nice -n 19 scripts/build-static.sh --jobs 1 > "$logs/static.log" 2>&1 || rc=$?
  echo "$rc" > "$logs/static.rc"
  rc=0; BLESEND_BUILD_JOBS=1 nice -n 19 scripts/fuzz.sh --jobs 1 --time "${FUZZ_SECONDS:-20}" > "$logs/fuzz.log" 2>&1 || rc=$?
  echo "$rc" > "$logs/fuzz.rc"
) &
helpers=$!
background+=("$helpers")

rc=0
stage "lab tests on the host image (real BlueZ in a VM)"
scripts/lab-tests.sh --images host --package-on "" || rc=$?   # (its swift build: nothing left to do)

stage "waiting for the static build"
while [ ! -f "$logs/static.rc" ] && kill -0 "$helpers" 2>/dev/null; do sleep 2; done
cat "$logs/static.log"
if [ "$(cat "$logs/static.rc" 2>/dev/null)" != 0 ]; then
  echo "test: scripts/build-static.sh failed; the trixie image's boots cannot run" >&2
  exit 1
fi
stage "lab tests on the trixie image, and the package"
scripts/lab-tests.sh --no-build --images trixie || { r=$?; [ "$rc" = 0 ] && rc=$r; }

stage "waiting for the fuzzing"
wait "$helpers" || true
cat "$logs/fuzz.log"
if [ "$(cat "$logs/fuzz.rc" 2>/dev/null)" != 0 ]; then
  echo "test: fuzzing failed" >&2
  [ "$rc" = 0 ] && rc=1
fi
[ "$rc" = 0 ] || { echo "test: FAILED (exit $rc) after $((SECONDS - start)) s" >&2; exit "$rc"; }
rm -rf "$logs"
echo "test: all done in $((SECONDS - start)) s"

#!/usr/bin/env bash
# Fuzzing with libFuzzer (docs/fuzzing.md).
#
#   scripts/fuzz.sh [--time SECONDS] [--runs N] [--jobs JOBS] [--debug] [TARGET...]
#
# Builds the fuzz executable (only that product) with -sanitize=fuzzer,address into .build-fuzz, so
# the normal executables are never linked against libFuzzer, then fuzzes each TARGET (default: all)
# for SECONDS (default 20), JOBS at a time (default: the number of cores), starting from its seed
# corpus in Tests/Fuzz/corpus and its crashers in Tests/Fuzz/crashers. New inputs go to fuzz-out/corpus/TARGET (kept between runs,
# not committed), crashes to fuzz-out/crashes/TARGET/. Prints executions and exec/s per target and
# exits non-zero if any target found a crash, a leak, a timeout or a memory-limit breach.
#
# --runs N also stops each target after N executions (whichever of time and runs comes first).
# --debug builds without optimisation (quicker to build, slower to fuzz).
# FUZZ_NICE (default 19) is the nice level of the fuzzing processes; BLESEND_BUILD_JOBS caps the
# build's compiler jobs.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=20
runs=""
jobs=$(nproc 2>/dev/null || echo 1)
configuration=release
targets=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --time) seconds="$2"; shift 2 ;;
        --runs) runs="$2"; shift 2 ;;
        --jobs) jobs="$2"; shift 2 ;;
        --debug) configuration=debug; shift ;;
        -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "fuzz: unknown option $1" >&2; exit 64 ;;
        *) targets+=("$1"); shift ;;
    esac
done

start=$SECONDS
echo "== fuzz: building blesend-fuzz ($configuration, -sanitize=fuzzer,address) in .build-fuzz"
# --sanitize fuzzer makes SwiftPM link libFuzzer's main; -sanitize=fuzzer,address instruments every
# module for coverage and AddressSanitizer; BLESEND_LIBFUZZER selects the libFuzzer entry point.
swift build --scratch-path .build-fuzz -c "$configuration" --product blesend-fuzz ${BLESEND_BUILD_JOBS:+--jobs "$BLESEND_BUILD_JOBS"} \
    --sanitize fuzzer -Xswiftc -sanitize=fuzzer,address -Xswiftc -DBLESEND_LIBFUZZER \
    2> >(grep -v "Cannot export local symbol" >&2)
binary=".build-fuzz/$configuration/blesend-fuzz"
echo "fuzz: built in $((SECONDS - start)) s"

if [[ ${#targets[@]} -eq 0 ]]; then
    # The target list, from the sources (the instrumented binary only fuzzes).
    mapfile -t targets < <(ls Tests/Fuzz/corpus)
fi

# The Swift runtime's backtracer would hold a crashing process up; libFuzzer reports crashes itself.
export SWIFT_BACKTRACE=enable=no
# Leaks are findings too (detect_leaks); keep ASan's own reports short.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:symbolize=1}"

# fuzz_one TARGET: fuzzes one target; prints its summary line (FAILED at the end if it found
# something) and, on a finding, the lines that say what and how to reproduce it.
fuzz_one() {
    local target=$1 work crashes log seeds limit max_len status executions rate memory line
    [[ -d "Tests/Fuzz/corpus/$target" ]] || { echo "$target: no corpus   FAILED"; return; }
    work="fuzz-out/corpus/$target"
    crashes="fuzz-out/crashes/$target"
    log="fuzz-out/$target.log"
    mkdir -p "$work" "$crashes"
    seeds=("Tests/Fuzz/corpus/$target")
    [[ -d "Tests/Fuzz/crashers/$target" ]] && seeds+=("Tests/Fuzz/crashers/$target")
    limit=(-max_total_time="$seconds")
    # Inputs up to 4096 bytes, except where a peer's one input may be longer and its length is
    # what matters: a record plaintext is up to 65518 bytes, and a batch nested to that size
    # once took the receiver to 700 MB (issue 20).
    case "$target" in
        transfer-message) max_len=65518 ;;
        *) max_len=4096 ;;
    esac
    [[ -n "$runs" ]] && limit+=(-runs="$runs")
    status=0
    nice -n "${FUZZ_NICE:-19}" "$binary" --target="$target" "$work" "${seeds[@]}" \
        "${limit[@]}" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512 \
        -artifact_prefix="$crashes/" -print_final_stats=1 >"$log" 2>&1 || status=$?
    executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    memory=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
    line=$(printf '%-20s %12s execs %8s exec/s %6s MB peak RSS' "$target" "${executions:-?}" "${rate:-?}" "${memory:-?}")
    if [[ $status -ne 0 ]]; then
        echo "$line   FAILED (exit $status)"
        grep -E "ERROR: libFuzzer|ERROR: AddressSanitizer|ERROR: LeakSanitizer|Fatal error|SUMMARY|Test unit written|^Base64:" "$log" | head -20 || true
        echo "fuzz: full log in $log; reproduce with:"
        echo "  SWIFT_BACKTRACE=enable=no $binary --target=$target $crashes/<crash-file>"
    else
        echo "$line"
    fi
}

# Targets run $jobs at a time (libFuzzer uses one core per process): each still gets its full
# time, and the stage takes 1/jobs as long.
results=$(mktemp -d "${TMPDIR:-/tmp}/blesend-fuzz.XXXXXX")
trap 'rm -rf "$results"' EXIT
echo "== fuzz: ${#targets[@]} targets, $seconds s each${runs:+ or $runs runs, whichever comes first}, $jobs at a time"
running=0
for i in "${!targets[@]}"; do
    if (( running >= jobs )); then wait -n || true; running=$((running - 1)); fi
    fuzz_one "${targets[$i]}" > "$results/$i" &
    running=$((running + 1))
done
wait
failed=()
summary=()
for i in "${!targets[@]}"; do
    first=$(head -n 1 "$results/$i")
    summary+=("$first")
    if [[ $first == *FAILED* ]]; then
        failed+=("${targets[$i]}")
        tail -n +2 "$results/$i" >&2
    fi
done

echo "== fuzz summary ($((SECONDS - start)) s, build included)"
printf '%s\n' "${summary[@]}"
if [[ ${#failed[@]} -gt 0 ]]; then
    echo "fuzz: FAILED: ${failed[*]}" >&2
    exit 1
fi

#!/usr/bin/env bash
# The statically linked release binaries, blesend and blerecv, in .build-static/release: what the
# lab's trixie image runs (it has no Swift toolchain) and what scripts/package.sh packages (same
# flags and scratch path, so the package reuses this build). Also blesend-labcheck, which the lab's
# scripts run for the exit statuses and to read --json logs (never packaged).
#
#   scripts/build-static.sh [--jobs N]
#
# --jobs N: at most N compiler jobs (default: swift build's own, one per core).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --jobs) jobs=(--jobs "$2"); shift 2 ;;
        -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "build-static: unknown argument $1" >&2; exit 64 ;;
    esac
done
for product in blesend blerecv blesend-labcheck; do
    # -z now: full RELRO, as Debian's hardening flags (lintian: hardening-no-bindnow).
    swift build -c release --static-swift-stdlib -Xlinker -z -Xlinker now --scratch-path .build-static \
        --product "$product" "${jobs[@]}"
done

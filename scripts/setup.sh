#!/usr/bin/env bash
# Installs what blesend needs to build and test on Debian 12, as root: the C libraries
# (libsodium, libdbus, libzstd), a D-Bus daemon for the tests, and the VM lab (QEMU, BlueZ, a kernel; both
# images: the host's own root and a Debian 13 root built with mmdebstrap).
# Idempotent. The Swift 6 toolchain itself must already be on PATH (Debian does not package it).
set -euo pipefail
cd "$(dirname "$0")/.."

need=(libsodium-dev libdbus-1-dev libzstd-dev pkg-config dbus time)
if ! dpkg -s "${need[@]}" >/dev/null 2>&1; then
  echo "setup: installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}"
fi

if ! command -v swift >/dev/null 2>&1; then
  echo "setup: error: no swift on PATH; install a Swift 6 toolchain (swift.org) first" >&2
  exit 1
fi

# The lab: its default image (this machine's root, Debian 12's kernel) and a Debian 13 root
# (mmdebstrap) and kernel. scripts/test.sh sets BLESEND_SETUP_LAB=0 and sets the lab up in the
# background, beside the Swift build.
if [ "${BLESEND_SETUP_LAB:-1}" != 0 ]; then
  lab/setup.sh
  lab/setup.sh --image trixie
fi
echo "setup: ok ($(swift --version 2>&1 | head -1))"

#!/bin/bash
# blesend lab: one-time, idempotent preparation of the BlueZ test VM on Debian 12 (run as root).
#
# Usage: setup.sh [--image host|trixie] [--bumble] [--packages-only]
#   (default image: $BLESEND_LAB_IMAGE, else host)
#
# --packages-only: step 1 only, the Debian packages of what the other options name, in one apt
#   transaction (scripts/test.sh: then the images and bumble are set up side by side, none of them
#   needing apt, so they never wait on dpkg's lock).
#
# --bumble (opt-in, either image): also installs Google's bumble (PyPI) into a venv of Debian's
#   python3, $BLESEND_LAB_WORK/bumble-venv, for BT_CONTROLLERS=bumble (lab/README.md, "bumble
#   controllers"). The venv runs on the host only. BLESEND_LAB_BUMBLE=VERSION picks another release.
#
# Image "host" (the default): the guest runs on this machine's own root file system.
#   1. installs the Debian packages the lab needs (qemu, bluez + btvirt, busybox-static, ...)
#   2. fetches Debian's stock kernel package with `apt-get download` and unpacks it into the
#      work folder (it is NOT installed: the host kernel and /boot are left alone)
#   3. runs depmod on the unpacked module tree and builds the small initramfs
# Image "trixie": a Debian 13 root file system of its own, $BLESEND_LAB_WORK/trixie/root.
#   1. as above, plus mmdebstrap
#   2. mmdebstrap --variant=minbase trixie with BlueZ, btvirt, dbus, python3-dbus/gi and the
#      libraries of the statically linked blesend binaries (no Swift toolchain)
#   3. trixie's own kernel (linux-image-amd64) downloaded inside that root with `apt-get download`
#      and unpacked INTO it with `dpkg-deb -x` (modules under /usr/lib/modules, depmod in a chroot)
#   4. its initramfs, $BLESEND_LAB_WORK/trixie/initramfs.cpio.gz
#
# Everything it downloads or builds lives in $BLESEND_LAB_WORK
# (default: ${XDG_CACHE_HOME:-$HOME/.cache}/blesend-lab), never in the source tree.
# Env: BLESEND_LAB_KPKG  kernel meta package (default linux-image-amd64; do not use the
#                        -cloud- flavour: it has no CONFIG_BT and no 9p)
#      BLESEND_LAB_FORCE=1  re-download the kernel and rebuild the initramfs (trixie: the whole root)
#      BLESEND_LAB_MIRROR   Debian mirror for mmdebstrap (default http://deb.debian.org/debian)
set -euo pipefail

IMAGE=${BLESEND_LAB_IMAGE:-host}
BUMBLE=0
PACKAGES_ONLY=0
while [ $# -gt 0 ]; do
  case "$1" in
    --image) IMAGE=${2:?--image needs a name}; shift;;
    --image=*) IMAGE=${1#--image=};;
    --bumble) BUMBLE=1;;
    --packages-only) PACKAGES_ONLY=1;;
    -h|--help) sed -n '2,30p' "$0"; exit 0;;
    *) echo "usage: setup.sh [--image host|trixie] [--bumble] [--packages-only]" >&2; exit 2;;
  esac
  shift
done
case "$IMAGE" in host|trixie) ;; *) echo "setup: error: unknown image '$IMAGE' (host or trixie)" >&2; exit 2;; esac

LAB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
WORK=${BLESEND_LAB_WORK:-${XDG_CACHE_HOME:-$HOME/.cache}/blesend-lab}
KPKG=${BLESEND_LAB_KPKG:-linux-image-amd64}
PKGS=(qemu-system-x86 bluez bluez-test-tools busybox-static kmod cpio dbus python3-dbus python3-gi)
# trixie: its root (mmdebstrap) and its package boot, which builds the .deb first (scripts/package.sh's
# tools: on a new machine lintian's install alone took 38 s inside that boot's turn)
[ "$IMAGE" = trixie ] && PKGS+=(mmdebstrap xz-utils zstd dpkg-dev binutils lintian)
[ "$BUMBLE" = 1 ] && PKGS+=(python3-venv)

say() { printf 'setup: %s\n' "$*"; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root (needs apt-get)"
command -v apt-get >/dev/null || die "apt-get not found: the lab expects Debian 12"
case "$WORK" in "$LAB"|"$LAB"/*|"$(dirname "$LAB")"/*)
  die "work folder $WORK is inside the source tree; set BLESEND_LAB_WORK elsewhere";; esac
case "$WORK$LAB" in *[[:space:]]*) die "paths with spaces are not supported (kernel command line)";; esac
mkdir -p "$WORK"
export DEBIAN_FRONTEND=noninteractive

# --- 1. packages -------------------------------------------------------------------------
updated=0
apt_update() { [ "$updated" = 1 ] && return; say "apt-get update"; apt-get update -qq; updated=1; }
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  apt_update
  say "installing: ${missing[*]}"
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  say "packages already installed: ${PKGS[*]}"
fi
[ "$PACKAGES_ONLY" = 1 ] && exit 0

# --- bumble (opt-in): a venv on the host for lab/bumble-link.py -----------------------------
BUMBLE_VERSION=${BLESEND_LAB_BUMBLE:-0.0.236}
if [ "$BUMBLE" = 1 ]; then
  venv=$WORK/bumble-venv
  if [ "$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("bumble"))' 2>/dev/null)" = "$BUMBLE_VERSION" ]; then
    say "bumble $BUMBLE_VERSION already in $venv"
  else
    say "installing bumble $BUMBLE_VERSION into $venv (pip, from PyPI)"
    [ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check "bumble==$BUMBLE_VERSION" \
      || die "pip install bumble==$BUMBLE_VERSION failed"
  fi
fi

if [ "$IMAGE" = trixie ]; then
  # mmdebstrap (apt) checks trixie's Release file with the trixie keys (debian-archive-keyring 2023.3+deb12u1 on)
  if [ ! -f /usr/share/keyrings/debian-archive-trixie-stable.gpg ]; then
    apt_update
    say "upgrading debian-archive-keyring (no trixie keys yet)"
    apt-get install -y -qq --no-install-recommends debian-archive-keyring
  fi
  exec "$LAB/mktrixie.sh" "$WORK/trixie"
fi

# --- 2. kernel ---------------------------------------------------------------------------
# Resolve the meta package to the versioned image package (e.g. linux-image-6.1.0-56-amd64).
resolve_kernel() {
  apt-cache depends "$KPKG" 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}'
}
KDEB=$(resolve_kernel || true)
if [ -z "$KDEB" ]; then apt_update; KDEB=$(resolve_kernel || true); fi
[ -n "$KDEB" ] || die "cannot resolve $KPKG to a versioned kernel package (apt-cache depends $KPKG)"
KV=${KDEB#linux-image-}
KROOT=$WORK/kernel
if [ "${BLESEND_LAB_FORCE:-0}" = 1 ] || [ ! -f "$KROOT/boot/vmlinuz-$KV" ] || [ ! -f "$KROOT/lib/modules/$KV/modules.dep" ]; then
  mkdir -p "$WORK/debs"
  rm -f "$WORK/debs/${KDEB}"_*.deb
  say "downloading $KDEB"
  # (as root, apt-get download warns that the download is unsandboxed; that is expected)
  if ! (cd "$WORK/debs" && apt-get download -q "$KDEB") > "$WORK/debs/download.log" 2>&1; then
    cat "$WORK/debs/download.log" >&2
    die "apt-get download $KDEB failed (try: apt-get update)"
  fi
  debs=("$WORK/debs/${KDEB}"_*.deb)
  deb=${debs[0]}
  [ -f "$deb" ] || die "apt-get download $KDEB produced no .deb"
  say "unpacking $(basename "$deb") into $KROOT"
  rm -rf "$KROOT" "$KROOT.tmp"
  mkdir -p "$KROOT.tmp"
  dpkg-deb -x "$deb" "$KROOT.tmp"
  for opt in CONFIG_BT=m CONFIG_BT_HCIVHCI=m CONFIG_NET_9P_VIRTIO=m CONFIG_OVERLAY_FS=m; do
    grep -q "^$opt" "$KROOT.tmp/boot/config-$KV" || die "kernel $KV lacks $opt"
  done
  depmod -b "$KROOT.tmp" "$KV"
  mv "$KROOT.tmp" "$KROOT"
  rm -f "$WORK/initramfs.cpio.gz"
else
  say "kernel $KV already unpacked in $KROOT"
fi

# --- 3. initramfs ------------------------------------------------------------------------
if [ ! -f "$WORK/initramfs.cpio.gz" ] || [ "$LAB/mkinitramfs.sh" -nt "$WORK/initramfs.cpio.gz" ]; then
  "$LAB/mkinitramfs.sh" "$KROOT" "$KV" "$WORK/initramfs.cpio.gz"
else
  say "initramfs up to date: $WORK/initramfs.cpio.gz"
fi
printf '%s\n' "$KV" > "$WORK/kernel-version"
say "ok: kernel $KV, work folder $WORK"

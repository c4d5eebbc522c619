#!/bin/bash
# blesend lab: build the Debian 13 "trixie" image in DIR (called by `setup.sh --image trixie`, as
# root, after the host packages are in place). Idempotent: a finished image is reused unless the
# package list below changed or BLESEND_LAB_FORCE=1.
#
#   DIR/root                 mmdebstrap --variant=minbase trixie + the packages below, with trixie's
#                            kernel unpacked into it (/boot/vmlinuz-KV, /usr/lib/modules/KV)
#   DIR/initramfs.cpio.gz    mkinitramfs.sh for that kernel
#   DIR/kernel-version       KV
#
# The root gets no Swift toolchain: the lab runs the statically linked blesend/blerecv
# (swift build --static-swift-stdlib), which need only libsodium23, libdbus-1-3, libstdc++6 and glibc.
# Usage: mktrixie.sh DIR
set -euo pipefail
LAB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ $# -eq 1 ] || { echo "usage: mktrixie.sh DIR" >&2; exit 2; }
DIR=$1
ROOTFS=$DIR/root
MIRROR=${BLESEND_LAB_MIRROR:-http://deb.debian.org/debian}
KPKG=${BLESEND_LAB_KPKG:-linux-image-amd64}
# bluez-test-tools: btvirt; bluez: bluetoothd, hcitool, hciconfig, btmgmt, btmon; systemd: busctl;
# python3-dbus + python3-gi: lab/raw-*.py and Tests/Lab/hostile-central.py; util-linux: setpriv, dmesg;
# libsodium23, libdbus-1-3, libstdc++6: what the static blesend binaries still link dynamically.
INCLUDE=bluez,bluez-test-tools,dbus,libsodium23,libdbus-1-3,libstdc++6,kmod,python3,python3-dbus,python3-gi,systemd,iproute2,util-linux,procps
STAMP="trixie minbase mmdebstrap $INCLUDE $KPKG"

say() { printf 'setup[trixie]: %s\n' "$*"; }
die() { printf 'setup[trixie]: error: %s\n' "$*" >&2; exit 1; }
command -v mmdebstrap >/dev/null || die "mmdebstrap missing (apt-get install mmdebstrap)"
mkdir -p "$DIR"

KV=$(cat "$DIR/kernel-version" 2>/dev/null || true)
if [ "${BLESEND_LAB_FORCE:-0}" != 1 ] && [ -n "$KV" ] && [ -f "$ROOTFS/boot/vmlinuz-$KV" ] \
   && [ -f "$ROOTFS/usr/lib/modules/$KV/modules.dep" ] \
   && [ "$(cat "$ROOTFS/.blesend-lab-stamp" 2>/dev/null)" = "$STAMP" ]; then
  say "root file system already built in $ROOTFS (kernel $KV)"
else
  NEW=$ROOTFS.tmp
  rm -rf "$NEW"
  # mmdebstrap, not debootstrap: the same 134 packages in 21 s and 22 s of CPU against 58 s and 66 s
  # (measured here one after the other, nothing beside): apt fetches and installs in one pass, and
  # dpkg runs with force-unsafe-io (no fsync per file: a root that fails half-way is thrown away).
  # Kept: apt's package lists (the kernel is resolved with them below) and the machine-id systemd's
  # postinst wrote (dbus-daemon in the guest wants one); dropped: its dpkg.cfg.d entry.
  say "mmdebstrap --variant=minbase trixie into $NEW (about 30 s; log: $DIR/mmdebstrap.log)"
  if ! mmdebstrap --variant=minbase --include="$INCLUDE" --dpkgopt=force-unsafe-io \
       --skip=cleanup/apt/lists,cleanup/reproducible \
       --customize-hook='rm -f "$1/etc/dpkg/dpkg.cfg.d/99mmdebstrap"' \
       trixie "$NEW" "$MIRROR" > "$DIR/mmdebstrap.log" 2>&1; then
    tail -n 30 "$DIR/mmdebstrap.log" >&2
    die "mmdebstrap failed (log: $DIR/mmdebstrap.log)"
  fi
  # The kernel: trixie's meta package resolved with the root's own package lists, downloaded inside it.
  KDEB=$(chroot "$NEW" apt-cache depends "$KPKG" 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
  [ -n "$KDEB" ] || die "cannot resolve trixie's $KPKG to a versioned kernel package"
  KV=${KDEB#linux-image-}
  say "downloading $KDEB (trixie)"
  rm -f "$NEW"/tmp/*.deb
  # (APT::Sandbox::User=root: the chroot's _apt user cannot write to /tmp's files as created here)
  if ! chroot "$NEW" sh -c "cd /tmp && apt-get download -q -o APT::Sandbox::User=root '$KDEB'" > "$DIR/download.log" 2>&1; then
    cat "$DIR/download.log" >&2
    die "apt-get download $KDEB failed inside the trixie root"
  fi
  debs=("$NEW"/tmp/"$KDEB"_*.deb)
  [ -f "${debs[0]}" ] || die "apt-get download $KDEB produced no .deb"
  say "unpacking $(basename "${debs[0]}") into the root"
  dpkg-deb -x "${debs[0]}" "$NEW"
  rm -f "$NEW"/tmp/*.deb
  for opt in CONFIG_BT=m CONFIG_BT_HCIVHCI=m CONFIG_NET_9P_VIRTIO=m CONFIG_9P_FS=m CONFIG_OVERLAY_FS=m; do
    grep -q "^$opt" "$NEW/boot/config-$KV" || die "kernel $KV lacks $opt"
  done
  chroot "$NEW" depmod "$KV"
  chroot "$NEW" apt-get clean
  printf '%s\n' "$STAMP" > "$NEW/.blesend-lab-stamp"
  rm -rf "$ROOTFS" "$DIR/initramfs.cpio.gz"
  mv "$NEW" "$ROOTFS"
  printf '%s\n' "$KV" > "$DIR/kernel-version"
fi

if [ ! -f "$DIR/initramfs.cpio.gz" ] || [ "$LAB/mkinitramfs.sh" -nt "$DIR/initramfs.cpio.gz" ]; then
  "$LAB/mkinitramfs.sh" "$ROOTFS" "$KV" "$DIR/initramfs.cpio.gz"
else
  say "initramfs up to date: $DIR/initramfs.cpio.gz"
fi
say "ok: kernel $KV, BlueZ $(chroot "$ROOTFS" dpkg-query -W -f='${Version}' bluez), glibc $(chroot "$ROOTFS" dpkg-query -W -f='${Version}' libc6), root $ROOTFS"

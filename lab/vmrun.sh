#!/bin/bash
# blesend lab: run one command inside a throw-away QEMU VM with real kernel Bluetooth.
#
# Usage: vmrun.sh [--image host|trixie] [--systemd] [--mem MiB] [--cpus N] [--timeout S] [--keep]
#                  [--tcg|--kvm] -- command [args...]
#
# Image "host" (default; or $BLESEND_LAB_IMAGE): the VM boots Debian's stock kernel (unpacked by
# setup.sh) and uses this machine's root filesystem read-only over 9p with a RAM overlay on top,
# so every host path (the checkout, .build/, the Swift toolchain) exists in the guest at the same
# place. Image "trixie" (setup.sh --image trixie): trixie's kernel and the Debian 13 root from
# $BLESEND_LAB_WORK/trixie/root in the same way, plus the checkout ($BLESEND_LAB_SRC, default the
# one holding this script) at its host path, read-only with a RAM overlay; nothing else of the
# host is visible (no Swift toolchain: use binaries built with --static-swift-stdlib). The command runs as
# root in the current directory, with PATH, BT_*, BTVIRT_*, BLESEND_* and the variables named
# in $BLESEND_LAB_PASSENV carried over. Its writes go to guest RAM, except for
# $BLESEND_LAB_OUT (guest) = a run folder under $BLESEND_LAB_WORK/runs (host), which is removed
# after a successful run unless --keep is given.
# BT_CONTROLLERS=bumble: the virtual controllers are bumble's, run on this machine (bumble-link.py,
# BT_NCTRL of them, default 2, plus BT_BUMBLE_RAW for a bumble host) and handed to the guest as PCI
# serial ports; bt-up.sh attaches them instead of starting btvirt. Not with --systemd.
# BLESEND_LAB_DISK=FILE: FILE (raw) is the guest's /dev/vda, a virtio disk whose writes reach
# FILE as the guest flushes them (cache=writeback: what the guest synced is in FILE, what it did
# not may be lost), for tests that kill the VM as a power cut would (Tests/Lab/power-loss.sh).
# --systemd (image trixie only): systemd is PID 1 (guest-systemd.sh) and starts D-Bus, btvirt and
# bluetooth.service itself, as on an installed system; without it guest-init.sh is PID 1 and the
# command (run-suite.sh, through bt-up.sh) starts them.
#
# Exit status: the command's own; 124 on timeout; 125 if the VM stopped without a result;
# 2 on usage errors.
set -uo pipefail

LAB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
WORK=${BLESEND_LAB_WORK:-${XDG_CACHE_HOME:-$HOME/.cache}/blesend-lab}
IMAGE=${BLESEND_LAB_IMAGE:-host}
MEM=1024 CPUS=${BLESEND_LAB_CPUS:-1} TIMEOUT=600 KEEP=0 ACCEL=auto INIT=guest-init.sh

usage() { echo "usage: vmrun.sh [--image host|trixie] [--systemd] [--mem MiB] [--cpus N] [--timeout S] [--keep] [--tcg|--kvm] -- cmd [args...]" >&2; exit 2; }
die() { printf 'vmrun: error: %s\n' "$*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --image) IMAGE=${2:?}; shift;;
    --image=*) IMAGE=${1#--image=};;
    --mem) MEM=${2:?}; shift;;
    --cpus) CPUS=${2:?}; shift;;
    --timeout) TIMEOUT=${2:?}; shift;;
    --keep) KEEP=1;;
    --systemd) INIT=guest-systemd.sh;;
    --tcg) ACCEL=tcg;;
    --kvm) ACCEL=kvm;;
    --) shift; break;;
    -h|--help) usage;;
    *) break;;
  esac
  shift
done
[ $# -gt 0 ] || usage

# IDIR: the image's work folder; GUESTROOT: exported as the guest's root; KROOT (host image only):
# the unpacked kernel package whose modules guest-init binds on /lib/modules; SRC (trixie only):
# the checkout, mounted in the guest at the same path.
case "$IMAGE" in
  host) IDIR=$WORK GUESTROOT=/ KROOT=$WORK/kernel SRC=
        KARGS="blesend.kroot=$KROOT";;
  trixie) IDIR=$WORK/trixie GUESTROOT=$WORK/trixie/root KROOT=$WORK/trixie/root
        SRC=${BLESEND_LAB_SRC:-$(dirname "$LAB")}
        KARGS="blesend.src=$SRC";;
  *) die "unknown image '$IMAGE' (host or trixie)";;
esac
[ "$INIT" = guest-init.sh ] || [ "$IMAGE" = trixie ] || die "--systemd needs --image trixie (the host image shares this machine's /etc)"
INITRD=$IDIR/initramfs.cpio.gz
export BLESEND_LAB_IMAGE=$IMAGE   # (carried into the guest with the other BLESEND_* variables)
KV=$(cat "$IDIR/kernel-version" 2>/dev/null || true)
KERNEL=$KROOT/boot/vmlinuz-$KV
if [ -z "$KV" ] || [ ! -f "$KERNEL" ] || [ ! -f "$INITRD" ]; then
  die "no $IMAGE kernel/initramfs in $IDIR: run lab/setup.sh$([ "$IMAGE" = host ] || echo " --image $IMAGE") first (as root)"
fi
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 missing: run lab/setup.sh"
case "$LAB$KROOT$SRC" in *[[:space:]]*) die "paths with spaces cannot go on the kernel command line";; esac
if [ -n "$SRC" ]; then
  case "$LAB/" in "$SRC"/*) ;; *) die "the lab scripts ($LAB) are outside the shared checkout $SRC";; esac
  case "$PWD/" in "$SRC"/*) ;; *) echo "vmrun: warning: $PWD is not inside $SRC, which is all the $IMAGE guest sees of this machine; the command runs in /" >&2;; esac
fi

# KVM only with real hardware virtualisation. A /dev/kvm backed by anything else (seen:
# kvm_pvm on a nested cloud VM) cannot boot a stock kernel, so fall back to TCG.
if [ "$ACCEL" = auto ]; then
  ACCEL=tcg
  if [ -w /dev/kvm ] && { [ -d /sys/module/kvm_intel ] || [ -d /sys/module/kvm_amd ]; }; then ACCEL=kvm; fi
fi
case "$ACCEL" in
  kvm) ACCEL_ARGS=(-accel kvm -cpu host);;
  tcg) ACCEL_ARGS=(-accel "tcg,thread=multi,tb-size=256" -cpu "${BLESEND_LAB_CPU:-max}");;
esac

mkdir -p "$WORK/runs"
# kept (failed or --keep) run folders are pruned after two days
find "$WORK/runs" -mindepth 1 -maxdepth 1 -name 'run.*' -mtime +2 -exec rm -rf {} + 2>/dev/null
RUN=$(mktemp -d "$WORK/runs/run.XXXXXX")
{
  for v in PATH $(compgen -e | grep -E '^(BT_|BTVIRT_|BLESEND_)' | grep -vE '^BLESEND_LAB_(OUT|GUEST)$') ${BLESEND_LAB_PASSENV:-}; do
    [ -n "${!v+set}" ] && printf 'export %s=%q\n' "$v" "${!v}"
  done
  printf '%q ' "$@"; echo
} > "$RUN/cmd.sh"
pwd > "$RUN/cwd"

# BT_CONTROLLERS=bumble: the controllers are bumble's (lab/bumble-link.py), run HERE on the host at
# native speed, BT_NCTRL (default 2) of them plus BT_BUMBLE_RAW (default 0) for a bumble host, all
# on one virtual radio; each reaches the guest as a PCI serial port at slot 0x10+i, which bt-up.sh
# attaches with btattach (H4). Needs lab/setup.sh --bumble (a venv in $WORK/bumble-venv).
BT_ARGS=() BUMBLE_PID=""
case "${BT_CONTROLLERS:-btvirt}" in
  btvirt) ;;
  bumble)
    [ "$INIT" = guest-init.sh ] || die "BT_CONTROLLERS=bumble does not work with --systemd (its units start btvirt)"
    BPY=$WORK/bumble-venv/bin/python
    "$BPY" -c 'import bumble' 2>/dev/null || die "no bumble in $WORK/bumble-venv: run lab/setup.sh --bumble first"
    nb=$(( ${BT_NCTRL:-2} + ${BT_BUMBLE_RAW:-0} ))
    [ "$nb" -ge 1 ] && [ "$nb" -le 8 ] || die "BT_NCTRL + BT_BUMBLE_RAW must be 1..8 with BT_CONTROLLERS=bumble"
    BSOCK=$(mktemp -d /tmp/blesend-bumble.XXXXXX)   # (a Unix socket path must stay short)
    # The controllers must answer the guest within the kernel's 2 s HCI timeouts: never bound to
    # the one core a lane of scripts/test.sh gives its VM (there they starved: issue 30, run 3's
    # senders boots). nproc --all: plain nproc counts only the cores this process may use (1 in a
    # pinned lane), which until stop 37 kept the controllers on the lane's core after all.
    launch=()
    command -v taskset > /dev/null && launch=(taskset -c "0-$(( $(nproc --all) - 1 ))")
    "${launch[@]}" "$BPY" "$LAB/bumble-link.py" "$BSOCK" "${BT_NCTRL:-2}" --raw "${BT_BUMBLE_RAW:-0}" > "$RUN/bumble.log" 2>&1 &
    BUMBLE_PID=$!
    trap 'kill "$BUMBLE_PID" 2>/dev/null; rm -rf "$BSOCK"' EXIT
    for _ in $(seq 100); do [ -f "$BSOCK/ready" ] && break; kill -0 "$BUMBLE_PID" 2>/dev/null || break; sleep 0.1; done
    [ -f "$BSOCK/ready" ] || { cat "$RUN/bumble.log" >&2; die "bumble-link.py did not start"; }
    i=0
    for name in $(cat "$BSOCK/ready"); do
      BT_ARGS+=(-chardev "socket,id=bt$i,path=$BSOCK/$name.sock" -device "pci-serial,chardev=bt$i,addr=$(printf '0x%x' $((0x10 + i)))")
      i=$((i + 1))
    done
    KARGS="$KARGS 8250.nr_uarts=$((nb + 4))";;
  *) die "BT_CONTROLLERS must be btvirt or bumble";;
esac

DISK_ARGS=()
[ -n "${BLESEND_LAB_DISK:-}" ] && DISK_ARGS=(-drive "file=$BLESEND_LAB_DISK,if=virtio,format=raw,cache=writeback")

SRC_ARGS=()
[ -n "$SRC" ] && SRC_ARGS=(-fsdev "local,id=src,path=$SRC,security_model=none,readonly=on,multidevs=remap"
                           -device virtio-9p-pci,fsdev=src,mount_tag=src)

start=$(date +%s%N)
timeout --foreground -k 5 "$TIMEOUT" qemu-system-x86_64 "${ACCEL_ARGS[@]}" -m "$MEM" -smp "$CPUS" \
  -M q35 -nodefaults -no-user-config -display none -no-reboot \
  -chardev stdio,id=console,signal=off -serial chardev:console \
  -kernel "$KERNEL" -initrd "$INITRD" \
  -append "console=ttyS0 quiet loglevel=3 panic=-1 blesend.init=$LAB/$INIT blesend.image=$IMAGE $KARGS" \
  -fsdev local,id=hostroot,path="$GUESTROOT",security_model=none,readonly=on,multidevs=remap \
  -device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot \
  "${SRC_ARGS[@]}" \
  -fsdev local,id=out,path="$RUN",security_model=none,multidevs=remap \
  -device virtio-9p-pci,fsdev=out,mount_tag=out \
  -device virtio-rng-pci "${BT_ARGS[@]}" "${DISK_ARGS[@]}" < /dev/null | tr -d '\r'
qemu_rc=${PIPESTATUS[0]}
ms=$(( ($(date +%s%N) - start) / 1000000 ))

if [ "$qemu_rc" = 124 ]; then
  echo "vmrun: timed out after ${TIMEOUT}s" >&2; rc=124
elif [ -s "$RUN/rc" ]; then
  rc=$(cat "$RUN/rc")
else
  echo "vmrun: the VM stopped without a result (qemu exit $qemu_rc)" >&2; rc=125
fi
printf 'vmrun: image=%s accel=%s wall=%d.%01ds rc=%s run=%s\n' "$IMAGE" "$ACCEL" $((ms / 1000)) $((ms % 1000 / 100)) "$rc" "$RUN" >&2
if [ "$KEEP" = 0 ] && [ "$rc" = 0 ]; then rm -rf "$RUN"; fi
exit "$rc"

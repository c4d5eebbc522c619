#!/bin/bash
# Build the lab's initramfs: a static busybox plus the few modules needed to reach the root
# filesystem (virtio_pci, 9p over virtio, overlayfs). Its /init mounts the guest's root (exported
# by QEMU as 9p tag "hostroot": the host's / for image "host", the trixie root for "trixie")
# read-only, stacks a tmpfs overlay on it and switch_roots into the guest init script named on
# the kernel command line (blesend.init=PATH). With blesend.src=PATH on the command line (image
# trixie) it also mounts 9p tag "src" (the checkout) at PATH in the new root, read-only with a
# tmpfs overlay of its own, so the checkout's scripts and binaries resolve at the host's paths.
# Compressed modules (.ko.xz/.ko.zst, trixie's kernel) are unpacked: busybox insmod takes plain .ko.
# Usage: mkinitramfs.sh KERNEL_ROOT KERNEL_VERSION OUT.cpio.gz
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 KERNEL_ROOT KERNEL_VERSION OUT.cpio.gz" >&2; exit 2; }
KROOT=$1 KV=$2 OUT=$3
BB=/bin/busybox
die() { printf 'mkinitramfs: error: %s\n' "$*" >&2; exit 1; }
[ -x "$BB" ] || die "$BB missing (apt-get install busybox-static)"
# a dynamically linked busybox cannot run before the root fs is mounted
if ldd "$BB" >/dev/null 2>&1; then die "$BB is dynamically linked; install busybox-static"; fi
[ -d "$KROOT/lib/modules/$KV" ] || die "no module tree $KROOT/lib/modules/$KV"

STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$STAGE"/{bin,dev,proc,sys,mnt/host,mnt/rw,newroot,mod}
cp "$BB" "$STAGE/bin/busybox"
for applet in sh mount insmod mkdir switch_root cat sleep; do ln -s busybox "$STAGE/bin/$applet"; done

# Modules in load order (dependencies first, no duplicates).
for m in virtio_pci 9pnet_virtio 9p overlay; do
  modprobe -d "$KROOT" -S "$KV" --show-depends "$m" | awk '$1 == "insmod" {print $2}'
done | awk '!seen[$0]++' > "$STAGE/mod/paths"
while read -r path; do
  base=$(basename "$path")
  case "$base" in
    *.ko.xz) xz -dc "$path" > "$STAGE/mod/${base%.xz}"; base=${base%.xz};;
    *.ko.zst) zstd -qdc "$path" > "$STAGE/mod/${base%.zst}"; base=${base%.zst};;
    *.ko.gz) gzip -dc "$path" > "$STAGE/mod/${base%.gz}"; base=${base%.gz};;
    *) cp "$path" "$STAGE/mod/";;
  esac
  echo "$base" >> "$STAGE/mod/order"
done < "$STAGE/mod/paths"
rm "$STAGE/mod/paths"

cat > "$STAGE/init" <<'INIT'
#!/bin/sh
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
for m in $(cat /mod/order); do insmod "/mod/$m" 2>/dev/null; done
GUEST_INIT= SRC=
for arg in $(cat /proc/cmdline); do
  case "$arg" in
    blesend.init=*) GUEST_INIT=${arg#blesend.init=};;
    blesend.src=*) SRC=${arg#blesend.src=};;
  esac
done
fail() { echo "blesend-lab initramfs: $*" > /dev/console; echo o > /proc/sysrq-trigger; sleep 60; }
# cache=loose: the host root is read-only for the guest's lifetime, so caching is safe and fast
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000,cache=loose hostroot /mnt/host \
  || fail "cannot mount the host root over 9p"
mount -t tmpfs -o mode=755 tmpfs /mnt/rw
mkdir -p /mnt/rw/upper /mnt/rw/work
mount -t overlay -o lowerdir=/mnt/host,upperdir=/mnt/rw/upper,workdir=/mnt/rw/work overlay /newroot \
  || fail "overlay mount failed"
if [ -n "$SRC" ]; then
  mkdir -p /mnt/src /mnt/rw/src-upper /mnt/rw/src-work "/newroot$SRC"
  mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000,cache=loose src /mnt/src \
    || fail "cannot mount the checkout over 9p"
  mount -t overlay -o lowerdir=/mnt/src,upperdir=/mnt/rw/src-upper,workdir=/mnt/rw/src-work overlay "/newroot$SRC" \
    || fail "overlay mount of the checkout failed"
fi
[ -n "$GUEST_INIT" ] && [ -f "/newroot$GUEST_INIT" ] || fail "guest init '$GUEST_INIT' not found"
for d in proc sys dev; do mount --move "/$d" "/newroot/$d"; done
exec switch_root /newroot /bin/sh "$GUEST_INIT"
INIT
chmod 755 "$STAGE/init"
(cd "$STAGE" && find . -print | cpio -o -H newc --quiet | gzip -1) > "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
echo "mkinitramfs: wrote $OUT ($(du -h "$OUT" | cut -f1)) with modules: $(tr '\n' ' ' < "$STAGE/mod/order")"

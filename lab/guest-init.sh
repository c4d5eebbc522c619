#!/bin/sh
# blesend lab: PID 1 inside the VM (started by the initramfs after switch_root into a tmpfs
# overlay of the guest's root: the host's / for image "host", the trixie root for "trixie"). Prepares a minimal system, runs $OUT/cmd.sh, stores its exit
# status in $OUT/rc and powers the VM off. Nothing here writes to the host except $OUT.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TERM=dumb LANG=C.UTF-8
KROOT=
# shellcheck disable=SC2013  # the kernel command line is a list of words
for arg in $(cat /proc/cmdline); do
  case "$arg" in blesend.kroot=*) KROOT=${arg#blesend.kroot=};; esac
done
console() { echo "blesend-lab: $*" > /dev/console; }

mkdir -p /dev/pts /dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
# fresh, RAM-backed state: no pairing keys or sockets survive a run
mount -t tmpfs -o mode=755 tmpfs /run
mount -t tmpfs -o mode=1777 tmpfs /var/tmp
mount -t tmpfs -o mode=700 tmpfs /var/lib/bluetooth
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr
mkdir -p /run/lock /run/blesend-lab/out
hostname blesend-lab 2>/dev/null
ip link set lo up 2>/dev/null

# Image host: the host has no modules for the guest kernel, so bind the unpacked kernel package's
# tree. Image trixie: the kernel was unpacked into the root itself (no blesend.kroot).
if [ -n "$KROOT" ] && [ -d "$KROOT/lib/modules" ]; then
  mkdir -p /lib/modules && mount --bind "$KROOT/lib/modules" /lib/modules
elif [ -z "$KROOT" ] && [ -d "/lib/modules/$(uname -r)" ]; then
  :
else
  console "warning: no kernel module tree (blesend.kroot=$KROOT)"
fi

OUT=/run/blesend-lab/out
# the host's run folder, read-write (cache=none so the host sees writes at once)
if ! mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=none out "$OUT"; then
  console "cannot mount the run folder; powering off"
  echo o > /proc/sysrq-trigger
fi
export BLESEND_LAB_OUT="$OUT" BLESEND_LAB_GUEST=1
console "guest up after $(cut -d' ' -f1 /proc/uptime)s"
cd "$(cat "$OUT/cwd" 2>/dev/null || echo /)" 2>/dev/null || cd /

# stdout+stderr of the command: live on the serial console and in $OUT/output.log
( bash "$OUT/cmd.sh" < /dev/null; echo $? > "$OUT/rc" ) 2>&1 | tee "$OUT/output.log" > /dev/console
console "command done after $(cut -d' ' -f1 /proc/uptime)s (rc=$(cat "$OUT/rc" 2>/dev/null))"
sync
umount "$OUT" 2>/dev/null
echo o > /proc/sysrq-trigger
while :; do sleep 1; done > /dev/null 2>&1

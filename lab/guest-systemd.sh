#!/bin/sh
# blesend lab, image trixie with --systemd: PID 1 until it execs systemd (started by the initramfs
# after switch_root, like guest-init.sh). Prepares what guest-init.sh prepares for the command, then
# writes a handful of units into the RAM overlay and hands PID 1 to systemd, which starts D-Bus,
# btvirt (blesend-lab-btvirt.service) and BlueZ's own bluetooth.service the way a Debian system
# does, then runs $OUT/cmd.sh (blesend-lab-run.service, which calls this script with --run), stores
# its exit status in $OUT/rc and powers the VM off. Used to test what systemd itself applies,
# such as the sandbox of the packaged blerecv.service.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
OUT=/run/blesend-lab/out
console() { echo "blesend-lab: $*" > /dev/console; }

if [ "${1:-}" = --run ]; then
  # blesend-lab-run.service: the command, as guest-init.sh runs it.
  export HOME=/root TERM=dumb LANG=C.UTF-8 BLESEND_LAB_OUT="$OUT" BLESEND_LAB_GUEST=1
  console "systemd up; running the command after $(cut -d' ' -f1 /proc/uptime)s"
  cd "$(cat "$OUT/cwd" 2>/dev/null || echo /)" 2>/dev/null || cd /
  ( bash "$OUT/cmd.sh" < /dev/null; echo $? > "$OUT/rc" ) 2>&1 | tee "$OUT/output.log" > /dev/console
  console "command done after $(cut -d' ' -f1 /proc/uptime)s (rc=$(cat "$OUT/rc" 2>/dev/null))"
  journalctl -b --no-pager -o short-monotonic > "$OUT/journal.txt" 2>/dev/null
  sync
  umount "$OUT" 2>/dev/null
  echo o > /proc/sysrq-trigger
  exit 0
fi
if [ "${1:-}" = --failed ]; then
  # blesend-lab-failed.service: blesend-lab-run.service failed, so the command did not run (or
  # did not finish). Say why on the console, keep the journal in the run folder, and power off
  # at once rather than leave vmrun waiting for its timeout; without an rc file vmrun exits 125.
  console "blesend-lab-run.service failed after $(cut -d' ' -f1 /proc/uptime)s; failed units:"
  systemctl --failed --no-pager --plain --no-legend > /dev/console 2>&1
  for u in blesend-lab-btvirt.service blesend-lab-run.service bluetooth.service dbus.service; do
    journalctl -b --no-pager -o short-monotonic -u "$u" | tail -n 15 > /dev/console
  done
  journalctl -b --no-pager -o short-monotonic > "$OUT/journal.txt" 2>/dev/null
  console "the whole journal is in the run folder: journal.txt"
  sync
  umount "$OUT" 2>/dev/null
  echo o > /proc/sysrq-trigger
  exit 0
fi
if [ "${1:-}" = --wait-controllers ]; then
  # blesend-lab-btvirt.service is started once the kernel has both controllers.
  for _ in $(seq 100); do
    [ "$(ls /sys/class/bluetooth | grep -c '^hci')" -ge 2 ] && exit 0
    sleep 0.1
  done
  exit 1
fi

# /run is systemd's to keep (it leaves mount points that exist alone): the run folder lives there.
mount -t tmpfs -o mode=755 tmpfs /run
mkdir -p "$OUT"
if ! mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=none out "$OUT"; then
  console "cannot mount the run folder; powering off"
  echo o > /proc/sysrq-trigger
fi
mount -t tmpfs -o mode=700 tmpfs /var/lib/bluetooth
ln -sf /proc/self/fd /dev/fd
hostname blesend-lab 2>/dev/null

# The units call a copy of this script in /run: the checkout may lie anywhere on the host, and a
# path under /tmp would be hidden once systemd mounts its own /tmp (below).
self=/run/blesend-lab/guest-systemd.sh
cp "$0" "$self"
units=/etc/systemd/system
cat > "$units/blesend-lab.target" <<EOF
[Unit]
Description=blesend lab: Bluetooth up, then the command
Requires=basic.target
After=basic.target
Wants=blesend-lab-run.service
AllowIsolate=yes
EOF
ln -sf "$units/blesend-lab.target" "$units/default.target"
# Modules first (on-demand loading under TCG is slow enough to time out a controller's reset; see
# bt-up.sh), then two controllers before bluetoothd starts.
cat > "$units/blesend-lab-btvirt.service" <<EOF
[Unit]
Description=blesend lab: two virtual LE controllers on /dev/vhci
DefaultDependencies=no
Before=bluetooth.service
[Service]
ExecStartPre=/usr/sbin/modprobe -a bluetooth hci_vhci cmac ecdh_generic af_alg algif_hash algif_skcipher ecb ctr ccm drbg jitterentropy_rng sha512_generic sha3_generic ansi_cprng bnep rfcomm
ExecStart=/usr/bin/btvirt -L -l2
ExecStartPost=/bin/sh $self --wait-controllers
EOF
cat > "$units/blesend-lab-run.service" <<EOF
[Unit]
Description=blesend lab: the command
Wants=bluetooth.service blesend-lab-btvirt.service dbus.service
After=bluetooth.service blesend-lab-btvirt.service dbus.service
OnFailure=blesend-lab-failed.service
[Service]
Type=oneshot
ExecStart=/bin/sh $self --run
EOF
cat > "$units/blesend-lab-failed.service" <<EOF
[Unit]
Description=blesend lab: the command's unit failed; report and power off
DefaultDependencies=no
[Service]
Type=oneshot
ExecStart=/bin/sh $self --failed
EOF
# What a lab boot has no use for, and what would only slow it down under TCG. tmp.mount: trixie's
# systemd mounts a tmpfs on /tmp, which would hide a checkout (and the run's command, the .deb)
# that lives under /tmp on the host, as CI's clone may.
for u in tmp.mount getty@tty1.service serial-getty@ttyS0.service apt-daily.timer apt-daily-upgrade.timer dpkg-db-backup.timer \
         fstrim.timer systemd-pstore.service remote-fs.target systemd-timesyncd.service; do
  ln -sf /dev/null "$units/$u"
done
console "guest up after $(cut -d' ' -f1 /proc/uptime)s; starting systemd"
exec /lib/systemd/systemd

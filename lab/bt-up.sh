#!/bin/bash
# blesend lab, inside the VM: bring up real BlueZ on two virtual LE controllers.
#   kernel modules (preloaded) -> system dbus-daemon -> btvirt (hci0 + hci1 on /dev/vhci)
#   -> bluetoothd -> wait until bluetoothd reports both adapters Powered.
#   With systemd as PID 1 (vmrun.sh --systemd) its units have started all of that: only the wait.
# Logs and pid files: /run/blesend-lab/{dbus,btvirt,bluetoothd,btmon}.*
# Env:
#   BT_CONTROLLERS btvirt (default) or bumble: vmrun.sh runs bumble's controllers on the host
#                  (lab/bumble-link.py), one PCI serial port each; btattach attaches them (H4)
#                  instead of btvirt. Links get distinct handles (btvirt: all 0x002a)
#   BTVIRT_ARGS    btvirt options (default "-L -l2": two LE-only controllers)
#   BT_NCTRL       controllers to wait for (default 2)
#   BT_MAINCONF    main.conf contents, printf %b escapes allowed; e.g. '[GATT]\nChannels=1'
#                  turns EATT off (ATT then uses the fixed channel, CID 4)
#   BT_DEBUG=1     bluetoothd -d
#   BT_NOPLUGIN    bluetoothd -P LIST: plugins not to load (comma-separated globs), e.g. micp,bass,csip
#   BT_MON=1       record HCI traffic with btmon -w /run/blesend-lab/btmon.snoop
#   BT_UP_TIMEOUT  seconds (default 40)
# Exit 0 when every adapter is powered; 1 (after printing diagnostics) otherwise.
set -uo pipefail
shopt -s nullglob

LOGDIR=/run/blesend-lab
mkdir -p "$LOGDIR"
want=${BT_NCTRL:-2}
limit=${BT_UP_TIMEOUT:-40}
SECONDS=0

say() { printf 'bt-up: %s\n' "$*"; }
kernel_ctrls() { local c=(/sys/class/bluetooth/hci[0-9]*); echo "${#c[@]}"; }
powered() {   # prints "b true" / "b false", nothing if bluetoothd does not know the adapter
  busctl --system get-property org.bluez "/org/bluez/$1" org.bluez.Adapter1 Powered 2>/dev/null
}
diagnostics() {
  echo "---- bt-up diagnostics (after ${SECONDS}s)"
  hciconfig -a 2>&1 | grep -E '^hci|UP|DOWN'
  busctl --system tree org.bluez 2>&1 | head -20
  echo "-- dmesg (bluetooth)"; dmesg | grep -iE 'bluetooth|hci[0-9]|vhci' | tail -20
  echo "-- bluetoothd.log"; tail -n 40 "$LOGDIR/bluetoothd.log" 2>/dev/null
  echo "-- btvirt.log / btattach.log"; tail -n 20 "$LOGDIR/btvirt.log" "$LOGDIR/btattach.log" 2>/dev/null
}
# BT_CONTROLLERS=bumble (vmrun.sh started bumble's controllers on the host): controller i is the
# PCI serial port at slot 0x10+i; attach them one by one, each waiting for its hciN, so that hci<i>
# is controller i (address 00:AA:01:<i>:00:<i>).
start_bumble() {
  local i pci t tty n
  modprobe hci_uart || { say "modprobe hci_uart failed"; return 1; }
  for ((i = 0; i < want; i++)); do
    # the ttyS of PCI device 00:1X.0 (6.1: .../0000:00:1X.0/tty/ttySN; 6.12 puts serial-base
    # port devices in between)
    pci=0000:00:$(printf '%02x' $((0x10 + i))).0 tty=""
    for _ in $(seq 50); do
      for t in /sys/class/tty/ttyS*; do
        case "$(readlink -f "$t")" in */"$pci"/*) tty=${t##*/};; esac
      done
      [ -n "$tty" ] && break
      sleep 0.1
    done
    [ -n "$tty" ] || { say "no serial port for bumble controller $i (PCI $pci)"; return 1; }
    n=$(kernel_ctrls)
    btattach -B "/dev/$tty" -P h4 -N >> "$LOGDIR/btattach.log" 2>&1 &
    echo $! >> "$LOGDIR/btattach.pid"
    while [ "$(kernel_ctrls)" -le "$n" ] && [ "$SECONDS" -lt "$limit" ]; do sleep 0.1; done
    say "bumble controller $i on /dev/$tty: hci$n after ${SECONDS}s"
  done
}
start_btvirt() {
  # shellcheck disable=SC2086  # BTVIRT_ARGS is a word list on purpose
  btvirt ${BTVIRT_ARGS:--L -l2} >> "$LOGDIR/btvirt.log" 2>&1 &
  echo $! > "$LOGDIR/btvirt.pid"
  while [ "$(kernel_ctrls)" -lt "$want" ] && [ "$SECONDS" -lt "$limit" ]; do sleep 0.1; done
}

# systemd as PID 1 (vmrun.sh --systemd): D-Bus, btvirt and bluetoothd are its units (lab/
# guest-systemd.sh); only the wait and its repairs (step 5) are left to do here.
systemd=0
[ -d /run/systemd/system ] && systemd=1

start_stack() {
  # 1. Modules. Load up front everything the kernel would otherwise request on demand later:
  #    btvirt opens AF_ALG crypto sockets (af_alg, algif_hash/skcipher, ecb, cmac), SMP's ECDH
  #    needs a DRBG, bluetoothd pulls in bnep/rfcomm. Under TCG each on-demand modprobe takes
  #    seconds; while it runs btvirt stops servicing the first controller and the kernel's 2 s
  #    HCI_Reset timeout fires ("hci0: Opcode 0x0c03 failed: -110"), losing that adapter.
  modprobe -a bluetooth hci_vhci cmac ecdh_generic af_alg algif_hash algif_skcipher ecb ctr ccm \
    drbg jitterentropy_rng sha512_generic sha3_generic ansi_cprng bnep rfcomm \
    || { say "modprobe failed (is /lib/modules bound to the guest kernel's tree?)"; return 1; }

  # 2. System bus.
  mkdir -p /run/dbus
  dbus-daemon --system --fork --print-pid > "$LOGDIR/dbus.pid" || { say "dbus-daemon failed"; return 1; }

  # 3. Optional HCI trace, then the controllers (before bluetoothd, so it finds them at start).
  if [ -n "${BT_MON:-}" ]; then
    btmon -w "$LOGDIR/btmon.snoop" > /dev/null 2>&1 &
    echo $! > "$LOGDIR/btmon.pid"
    sleep 0.2
  fi
  if [ "${BT_CONTROLLERS:-btvirt}" = bumble ]; then start_bumble || { diagnostics; return 1; }; else start_btvirt; fi
  t_ctrl=$SECONDS

  # 4. bluetoothd: foreground, experimental interfaces on, optional custom main.conf.
  conf=/etc/bluetooth/main.conf
  if [ -n "${BT_MAINCONF:-}" ]; then
    conf=$LOGDIR/main.conf
    printf '%b\n' "$BT_MAINCONF" > "$conf"
  fi
  btd=/usr/libexec/bluetooth/bluetoothd
  [ -x "$btd" ] || btd=/usr/sbin/bluetoothd
  # shellcheck disable=SC2046
  "$btd" -n -E -f "$conf" $([ -n "${BT_DEBUG:-}" ] && echo -d) ${BT_NOPLUGIN:+-P "$BT_NOPLUGIN"} > "$LOGDIR/bluetoothd.log" 2>&1 &
  echo $! > "$LOGDIR/bluetoothd.pid"
}
if [ "$systemd" = 0 ]; then start_stack || exit 1; fi

# 5. Wait. Repair path for a controller whose init still timed out: after 8 s run
#    "hciconfig hciN up" (re-runs the init) twice, then restart btvirt (under systemd its unit:
#    seen on trixie with two VMs at once, "hci0: Opcode 0x0c03 failed: -110" and hci0 never in
#    bluetoothd).
repairs=0 last_repair=$SECONDS up=0
while :; do
  up=0 missing=()
  for ((i = 0; i < want; i++)); do
    if [ "$(powered "hci$i")" = "b true" ]; then up=$((up + 1)); else missing+=("hci$i"); fi
  done
  [ "$up" -ge "$want" ] || [ "$SECONDS" -ge "$limit" ] && break
  if [ $((SECONDS - last_repair)) -ge 8 ]; then
    repairs=$((repairs + 1)) last_repair=$SECONDS
    if [ "$repairs" -le 2 ]; then
      for h in "${missing[@]}"; do
        if [ -z "$(powered "$h")" ]; then say "$h unknown to bluetoothd; hciconfig $h up"; hciconfig "$h" up; fi
      done
    elif [ "${BT_CONTROLLERS:-btvirt}" = bumble ]; then
      [ "$repairs" = 3 ] && say "bumble controllers: no btvirt to restart; waiting"
    elif [ "$systemd" = 1 ]; then
      say "restarting blesend-lab-btvirt.service"
      systemctl restart blesend-lab-btvirt.service
    else
      say "restarting btvirt"
      kill "$(cat "$LOGDIR/btvirt.pid")" 2>/dev/null
      while [ "$(kernel_ctrls)" -gt 0 ] && [ "$SECONDS" -lt "$limit" ]; do sleep 0.1; done
      start_btvirt
    fi
  fi
  sleep 0.3
done
say "$([ "$systemd" = 1 ] && echo "systemd started BlueZ ($(systemctl is-active bluetooth.service))" || echo "controllers in kernel after ${t_ctrl}s"); $up/$want adapters powered in bluetoothd after ${SECONDS}s (repairs: $repairs)"
[ "$up" -ge "$want" ] && exit 0
diagnostics
[ "$systemd" = 1 ] && journalctl -b --no-pager -n 40 -u bluetooth.service -u blesend-lab-btvirt.service
exit 1

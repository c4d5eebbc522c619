#!/bin/bash
# Two LE links on one controller at once: the lab check of the bumble controllers (lab/README.md,
# "bumble controllers"). btvirt cannot do it (every link of a controller is handle 0x002a).
#   BT_CONTROLLERS=bumble BT_NCTRL=3 lab/run-suite.sh -- Tests/Lab/two-links.sh
# hci0 advertises (btmgmt add-adv, connectable); bluetoothd on hci1 and then on hci2 discovers it and
# calls Device1.Connect; each link must reach ServicesResolved (GATT discovery over it: data flows
# both ways). Then hci0 must list two LE links with distinct handles, both must still be up 5 s
# later, and both must end on Device1.Disconnect. No blesend binaries needed.
set -uo pipefail
[ "${BLESEND_LAB_BT:-}" = 1 ] || { echo "two-links: run me in the lab VM: BT_CONTROLLERS=bumble BT_NCTRL=3 lab/run-suite.sh -- $0" >&2; exit 2; }
PEER=00:AA:01:00:00:00
FAIL=0
T0=$(date +%s.%N)
log() { echo "# [$(awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')s] $*"; }
bad() { echo "not ok - $*"; FAIL=1; }
prop() {   # prop PATH INTERFACE NAME
  busctl --system get-property org.bluez "$1" "$2" "$3" 2>/dev/null
}
wait_prop() {   # wait_prop SECONDS PATH INTERFACE NAME VALUE
  local end=$((SECONDS + $1))
  while [ "$SECONDS" -lt "$end" ]; do [ "$(prop "$2" "$3" "$4")" = "$5" ] && return 0; sleep 0.2; done
  return 1
}
links() { hcitool -i hci0 con | grep -c handle; }

# advertise N: hci0 advertises connectably (advertising instance N). btmgmt 5.82 with no terminal
# hangs or returns without doing it, so it gets one from script(1); bounded either way.
advertise() {
  timeout 10 script -qec "btmgmt -i hci0 add-adv -c $1" /dev/null > "/run/two-links-adv$1.txt" 2>&1 \
    || { bad "btmgmt add-adv $1"; sed 's/^/#   | /' "/run/two-links-adv$1.txt"; }
}

# connect_from hciN: discover hci0 from hciN, Device1.Connect, wait for ServicesResolved. (Python:
# bluetoothd ends a discovery when the D-Bus client that started it leaves, so busctl cannot.)
connect_from() {
  local out
  out=$(/usr/bin/python3 - "$1" "$PEER" <<'PY'
import sys, time, dbus
adapter, peer = sys.argv[1], sys.argv[2]
bus = dbus.SystemBus()
t0 = time.monotonic()
def say(m): print(f'{adapter}: {m} after {time.monotonic() - t0:.1f} s', flush=True)
a = dbus.Interface(bus.get_object('org.bluez', f'/org/bluez/{adapter}'), 'org.bluez.Adapter1')
a.SetDiscoveryFilter({'Transport': 'le'})
a.StartDiscovery()
dev = f'/org/bluez/{adapter}/dev_' + peer.replace(':', '_')
props = None
while time.monotonic() - t0 < 20:
    try:
        props = dbus.Interface(bus.get_object('org.bluez', dev), 'org.freedesktop.DBus.Properties')
        props.Get('org.bluez.Device1', 'Address')
        break
    except dbus.DBusException:
        props = None
        time.sleep(0.2)
if props is None:
    say('not found'); sys.exit(1)
say('found')
a.StopDiscovery()
dbus.Interface(bus.get_object('org.bluez', dev), 'org.bluez.Device1').Connect(timeout=30)
say('connected')
while time.monotonic() - t0 < 60:
    if props.Get('org.bluez.Device1', 'ServicesResolved'):
        say('ServicesResolved'); sys.exit(0)
    time.sleep(0.2)
say('no ServicesResolved'); sys.exit(1)
PY
)
  local rc=$?
  echo "$out" | while IFS= read -r l; do log "$l"; done
  [ "$rc" = 0 ] || { bad "$1: connect to $PEER"; return 1; }
  log "$1: hci0 now holds $(links) link(s)"
}

advertise 1
connect_from hci1
# A peripheral's controller stops advertising when a central connects; advertise again.
advertise 2
connect_from hci2

echo "# hcitool -i hci0 con:"; hcitool -i hci0 con | sed 's/^/#   /'
handles=$(hcitool -i hci0 con | awk '/handle/ { for (i = 1; i < NF; i++) if ($i == "handle") print $(i + 1) }' | sort -u | tr '\n' ' ')
n=$(links)
if [ "$n" = 2 ] && [ "$(echo $handles | wc -w)" = 2 ]; then echo "ok - hci0 holds two LE links, handles $handles"; else bad "hci0 holds $n link(s), handles: $handles"; fi
for p in 00_AA_01_01_00_01 00_AA_01_02_00_02; do
  [ "$(prop "/org/bluez/hci0/dev_$p" org.bluez.Device1 Connected)" = "b true" ] || bad "bluetoothd on hci0: dev_$p not Connected"
done
sleep 5
n=$(links)
[ "$n" = 2 ] && echo "ok - both links still up 5 s later" || bad "$n link(s) on hci0 5 s later"
for a in hci1 hci2; do
  busctl --system --timeout=15 call org.bluez "/org/bluez/$a/dev_${PEER//:/_}" org.bluez.Device1 Disconnect || bad "$a: Disconnect"
done
end=$((SECONDS + 10))
while [ "$(links)" != 0 ] && [ "$SECONDS" -lt "$end" ]; do sleep 0.2; done
[ "$(links)" = 0 ] && echo "ok - both links ended on Device1.Disconnect" || bad "hci0 still lists $(links) link(s) after both Disconnects"
k=$(dmesg | grep -cE 'BUG|Oops|list_del corruption|general protection|segfault')
[ "$k" = 0 ] || { bad "kernel log: $k BUG/Oops/segfault line(s)"; dmesg | grep -A20 -E 'BUG|Oops' | head -40; }
exit "$FAIL"

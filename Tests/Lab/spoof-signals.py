#!/usr/bin/python3
"""Another client on the system bus speaks for bluetoothd and for the bus (issue 31, item 2).

Usage: spoof-signals.py PID DEVICE_PATH [FAKE_DEVICE_PATH]

Finds the bus connection of process PID (blerecv or blesend) and sends it, unicast and broadcast:
  - NameOwnerChanged("org.bluez", <bluetoothd's unique name>, "") as if from the bus: bluetoothd left;
  - NameOwnerChanged("org.bluez", <owner>, <our own unique name>): we own org.bluez now;
  - PropertiesChanged(org.bluez.Device1, Connected=false) on DEVICE_PATH: its link went down;
  - PropertiesChanged(org.bluez.Device1, Connected=true) on FAKE_DEVICE_PATH: a link came up.
A signal names only its path, interface and member: the sender is whatever the bus stamps (our
unique name), which is the one thing a receiver can check. Prints one JSON line of what it sent.
"""
import json
import sys

import dbus
import dbus.lowlevel


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    pid, device = int(sys.argv[1]), sys.argv[2]
    fake = sys.argv[3] if len(sys.argv) > 3 else None
    bus = dbus.SystemBus()
    driver = bus.get_object("org.freedesktop.DBus", "/org/freedesktop/DBus")
    names = [str(n) for n in driver.ListNames(dbus_interface="org.freedesktop.DBus") if str(n).startswith(":")]
    target = None
    for name in names:
        try:
            if int(driver.GetConnectionUnixProcessID(name, dbus_interface="org.freedesktop.DBus")) == pid:
                target = name
                break
        except dbus.DBusException:
            continue
    if target is None:
        print(json.dumps({"error": f"no bus connection of pid {pid}"}))
        return 1
    owner = str(driver.GetNameOwner("org.bluez", dbus_interface="org.freedesktop.DBus"))
    me = bus.get_unique_name()

    def signal(path, interface, member, signature, args):
        for destination in (target, None):
            msg = dbus.lowlevel.SignalMessage(path, interface, member)
            if destination:
                msg.set_destination(destination)
            msg.append(*args, signature=signature)
            bus.send_message(msg)

    sent = []
    signal("/org/freedesktop/DBus", "org.freedesktop.DBus", "NameOwnerChanged", "sss", ["org.bluez", owner, ""])
    sent.append("NameOwnerChanged(org.bluez left)")
    signal("/org/freedesktop/DBus", "org.freedesktop.DBus", "NameOwnerChanged", "sss", ["org.bluez", owner, me])
    sent.append("NameOwnerChanged(org.bluez is ours)")
    props = "org.freedesktop.DBus.Properties"
    signal(device, props, "PropertiesChanged", "sa{sv}as",
           ["org.bluez.Device1", {"Connected": dbus.Boolean(False, variant_level=1)}, dbus.Array([], signature="s")])
    sent.append(f"Connected=false on {device}")
    if fake:
        signal(fake, props, "PropertiesChanged", "sa{sv}as",
               ["org.bluez.Device1", {"Connected": dbus.Boolean(True, variant_level=1)}, dbus.Array([], signature="s")])
        sent.append(f"Connected=true on {fake}")
    bus.flush()
    print(json.dumps({"target": target, "bluetoothd": owner, "impostor": me, "sent": sent}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

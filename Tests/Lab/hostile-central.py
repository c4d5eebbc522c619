#!/usr/bin/python3
"""A hostile blesend sender for the lab's fault suite (runs inside the VM, after bt-up.sh).

It connects to blerecv's transfer service like a real sender, then misbehaves: it writes the
start of handshake message 1 (one well-formed start frame of a message that never completes)
plus frames with a bad CRC, never subscribes to notifications, never finishes, and holds the
BLE link until the receiver drops it (or --hold seconds pass).

    hostile-central.py [--adapter hci1] [--peer 00:AA:01:00:00:00] [--hold 60] [--notify]

--notify also subscribes to notifications (AcquireNotify), like an honest sender would.

Prints one JSON object per step on stdout: connected, wrote, then dropped (the receiver ended
the link: {"after_s": seconds since the last write}) or held (still connected after --hold).
Exit status: 0 dropped by the receiver, 3 still connected after --hold, 2 setup failure.
Plain blocking D-Bus calls and polling; no main loop is needed for a central that only writes.
"""
import argparse
import json
import os
import socket
import sys
import time

import dbus

BLUEZ = "org.bluez"
SERVICE_UUID = "6f3c0001-8c2e-4b6a-9d2f-7a1e5b0c4d10"
TRANSFER_UUID = "6f3c0002-8c2e-4b6a-9d2f-7a1e5b0c4d10"
OBJECT_MANAGER = "org.freedesktop.DBus.ObjectManager"
PROPERTIES = "org.freedesktop.DBus.Properties"
ADAPTER1 = "org.bluez.Adapter1"
DEVICE1 = "org.bluez.Device1"
CHAR1 = "org.bluez.GattCharacteristic1"
T0 = time.monotonic()


def say(event, **fields):
    fields = {"event": event, "t": round(time.monotonic() - T0, 2), **fields}
    print(json.dumps(fields), flush=True)


def crc16_ccitt_false(data):
    """docs/protocol.md §2: poly 0x1021, init 0xFFFF, no reflection, no final XOR."""
    crc = 0xFFFF
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def start_frame(seq, announced_length, fragment):
    """A data frame with S set (E clear): u16 message length, then the first fragment."""
    head = bytes([0x40 | (seq >> 8) & 0x1F, seq & 0xFF]) + announced_length.to_bytes(2, "big") + fragment
    return head + crc16_ccitt_false(head).to_bytes(2, "big")


def wait_until(cond, timeout, every=0.1):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = cond()
        if value:
            return value
        time.sleep(every)
    return cond()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--adapter", default="hci1")
    ap.add_argument("--peer", default="00:AA:01:00:00:00")
    ap.add_argument("--hold", type=float, default=60.0)
    ap.add_argument("--notify", action="store_true")
    args = ap.parse_args()

    bus = dbus.SystemBus()
    apath = "/org/bluez/" + args.adapter
    dpath = apath + "/dev_" + args.peer.replace(":", "_")
    manager = dbus.Interface(bus.get_object(BLUEZ, "/"), OBJECT_MANAGER)
    adapter = dbus.Interface(bus.get_object(BLUEZ, apath), ADAPTER1)

    def device_props():
        ifaces = manager.GetManagedObjects().get(dbus.ObjectPath(dpath), {})
        return ifaces.get(DEVICE1)

    # A disconnected object of the peer carries stale GATT UUIDs (lab/README.md): drop it, rescan.
    props = device_props()
    if props is not None and not props.get("Connected") and not props.get("Paired"):
        adapter.RemoveDevice(dbus.ObjectPath(dpath))
    adapter.SetDiscoveryFilter({"Transport": "le", "UUIDs": dbus.Array([SERVICE_UUID], signature="s")})
    adapter.StartDiscovery()
    try:
        found = wait_until(lambda: (device_props() or {}).get("UUIDs") is not None
                           and SERVICE_UUID in [str(u) for u in device_props().get("UUIDs", [])], 30)
    finally:
        try:
            adapter.StopDiscovery()
        except dbus.DBusException:
            pass
    if not found:
        say("error", message="receiver %s not found" % args.peer)
        return 2

    device = dbus.Interface(bus.get_object(BLUEZ, dpath), DEVICE1)
    device.Connect(timeout=30)
    dprops = dbus.Interface(bus.get_object(BLUEZ, dpath), PROPERTIES)
    if not wait_until(lambda: bool(dprops.Get(DEVICE1, "ServicesResolved")), 30):
        say("error", message="services never resolved")
        return 2
    chars = [str(p) for p, i in manager.GetManagedObjects().items()
             if str(p).startswith(dpath + "/") and CHAR1 in i and str(i[CHAR1].get("UUID")) == TRANSFER_UUID]
    if not chars:
        say("error", message="no transfer characteristic")
        return 2
    char = dbus.Interface(bus.get_object(BLUEZ, chars[0]), CHAR1)
    say("connected", device=dpath, characteristic=chars[0])

    held = []
    if args.notify:
        nfd, _ = char.AcquireNotify({})
        held.append(socket.socket(fileno=nfd.take()))
    wfd, mtu = char.AcquireWrite({})
    wsock = socket.socket(fileno=wfd.take())
    held.append(wsock)
    wsock.setblocking(True)
    # Message 1 is 32 + 48 + payload + 16 bytes; announce 200 and send only the first 40.
    frames = [start_frame(0, 200, os.urandom(40))]
    garbage = bytearray(start_frame(1, 64, os.urandom(20)))
    garbage[-1] ^= 0xFF  # bad CRC: the receiver drops (and counts) it
    frames.append(bytes(garbage))
    frames.append(os.urandom(30))
    # bluetoothd asks the receiver for its write socket on the first Write Command and may drop
    # what arrives meanwhile: send the frames again a second later, as a retransmitting sender would.
    for f in frames:
        wsock.send(f)
    time.sleep(1.0)
    for f in frames:
        wsock.send(f)
    frames = frames * 2
    wrote_at = time.monotonic()
    say("wrote", frames=len(frames), bytes=sum(len(f) for f in frames), mtu=int(mtu))

    # Hold the link: keep the sockets open and do nothing until the receiver ends the connection.
    def connected():
        try:
            return bool(dprops.Get(DEVICE1, "Connected"))
        except dbus.DBusException:
            return False
    wait_until(lambda: not connected(), args.hold, every=0.2)
    after = round(time.monotonic() - wrote_at, 2)
    status = 0 if not connected() else 3
    if status == 0:
        say("dropped", after_s=after)
    else:
        say("held", seconds=after)
    for s in held:
        s.close()
    if status == 3:
        try:
            device.Disconnect(timeout=10)
        except dbus.DBusException:
            pass
    return status


if __name__ == "__main__":
    try:
        sys.exit(main())
    except dbus.DBusException as e:
        say("error", message=str(e))
        sys.exit(2)

#!/usr/bin/python3
"""A hostile blesend sender for the lab's fault suite (runs inside the VM, after bt-up.sh).

It connects to blerecv's transfer service like a real sender, then misbehaves (--mode):

  half-handshake (default): writes the start of handshake message 1 (one well-formed start frame
      of a message that never completes) plus frames with a bad CRC through its AcquireWrite
      socket, never subscribes to notifications, never finishes.
  empty-write: writes that start frame with WriteValue(type=command), then a zero-length value.
      (Not through an acquired socket: bluetoothd 5.66's client-side sock_read takes a zero-length
      datagram for the end of the socket and stops reading it; nothing goes over the air.)
  hold-write: acquires the characteristic's write socket (AcquireWrite) and holds it, writing
      nothing: another local program that holds the socket blesend needs.
  subscribe-only: subscribes to notifications (AcquireNotify, as --notify) and never acquires the
      write socket or writes (what issue 20's review did with bleak: the receiver then re-registered
      its GATT application under the live subscription and bluetoothd 5.66 went away).
  bare: connects (services resolved, as a phone's BLE scanner app does on "connect") and touches
      nothing of the transfer service: a bare LE link, which opens no transfer channel at all.
  replay: writes the datagrams of a recorded handshake message 1 (--frames FILE, one hex line
      each: `blesend-labcheck message1` makes them) through its AcquireWrite socket, subscribed
      (as the sender it pretends to be), then stays silent: it cannot read message 2 or go on.

In every mode it then holds the BLE link until the receiver drops it, --hold seconds pass, or
SIGTERM arrives (then it closes its sockets and disconnects).

    hostile-central.py [--adapter hci1] [--peer 00:AA:01:00:00:00] [--hold 60] [--notify]
                       [--mode half-handshake|empty-write|hold-write|subscribe-only|bare|replay]
                       [--frames FILE]

--notify also subscribes to notifications (AcquireNotify), like an honest sender would.

Prints one JSON object per step on stdout: connected, acquired (hold-write, subscribe-only) or
wrote, then dropped
(the receiver ended the link: {"after_s": seconds since the last write}) or held (still connected
after --hold or at SIGTERM).
Exit status: 0 dropped by the receiver, 3 still connected after --hold or SIGTERM, 2 setup failure.
Plain blocking D-Bus calls and polling; no main loop is needed for a central that only writes.
"""
import argparse
import os
import signal
import socket
import sys
import time

import dbus

from labbus import ADAPTER1, BLUEZ, DEVICE1, PROPERTIES, say, wait_until

SERVICE_UUID = "6f3c0001-8c2e-4b6a-9d2f-7a1e5b0c4d10"
TRANSFER_UUID = "6f3c0002-8c2e-4b6a-9d2f-7a1e5b0c4d10"
OBJECT_MANAGER = "org.freedesktop.DBus.ObjectManager"
CHAR1 = "org.bluez.GattCharacteristic1"


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


def send_twice(wsock, frames):
    """Writes `frames` through the acquired socket, and again a second later: bluetoothd asks the
    receiver for its write socket on the first Write Command and may drop what arrives meanwhile,
    so send them again as a retransmitting sender would. Returns what was written."""
    wsock.setblocking(True)
    for f in frames:
        wsock.send(f)
    time.sleep(1.0)
    for f in frames:
        wsock.send(f)
    return frames * 2


def half_handshake(wsock):
    """Writes the start of message 1 and garbage through the acquired socket; returns the frames."""
    # Message 1 is 32 + 48 + payload + 16 bytes; announce 200 and send only the first 40.
    frames = [start_frame(0, 200, os.urandom(40))]
    garbage = bytearray(start_frame(1, 64, os.urandom(20)))
    garbage[-1] ^= 0xFF  # bad CRC: the receiver drops (and counts) it
    frames.append(bytes(garbage))
    frames.append(os.urandom(30))
    return send_twice(wsock, frames)


def replay(wsock, path):
    """Writes the recorded datagrams in FILE (hex, one per line) through the acquired socket, twice."""
    with open(path) as f:
        frames = [bytes.fromhex(line.strip()) for line in f if line.strip()]
    return send_twice(wsock, frames)


def write_value_then_empty(char):
    """The start of message 1, then, once the receiver has its write socket, one zero-length Write
    Command (WriteValue with an empty array)."""
    command = {"type": "command"}
    frame = start_frame(0, 200, os.urandom(40))
    char.WriteValue(dbus.ByteArray(frame), command)
    time.sleep(1.0)
    char.WriteValue(dbus.Array([], signature="y"), command)
    try:
        mtu = char.Get(CHAR1, "MTU", dbus_interface=PROPERTIES)
    except dbus.DBusException:
        mtu = 0
    return [frame, b""], mtu


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--adapter", default="hci1")
    ap.add_argument("--peer", default="00:AA:01:00:00:00")
    ap.add_argument("--hold", type=float, default=60.0)
    ap.add_argument("--notify", action="store_true")
    ap.add_argument("--mode", choices=["half-handshake", "empty-write", "hold-write", "subscribe-only", "bare", "replay"],
                    default="half-handshake")
    ap.add_argument("--frames", help="replay: a file of hex datagrams, one per line")
    args = ap.parse_args()
    if args.mode == "replay" and not args.frames:
        ap.error("--mode replay needs --frames FILE")
    stopped = []
    signal.signal(signal.SIGTERM, lambda *_: stopped.append(True))

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

    # The previous sender's link may still be up: bluetoothd ends it about 2 s after its
    # Disconnect. Connecting onto it would lose the link a moment later (as blesend's
    # GattCentral.waitForEarlierDisconnect knows); wait up to 3 s for it to go.
    wait_until(lambda: not (device_props() or {}).get("Connected"), 3)
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
    if args.mode == "bare":
        say("acquired", mtu=0)
        wrote = []
    elif args.notify or args.mode in ("subscribe-only", "replay"):
        nfd, mtu = char.AcquireNotify({})
        held.append(socket.socket(fileno=nfd.take()))
    if args.mode == "bare":
        pass
    elif args.mode == "subscribe-only":
        say("acquired", mtu=int(mtu))
        wrote = []
    elif args.mode == "empty-write":
        wrote, mtu = write_value_then_empty(char)
    else:
        wfd, mtu = char.AcquireWrite({})
        wsock = socket.socket(fileno=wfd.take())
        held.append(wsock)
        if args.mode == "hold-write":
            say("acquired", mtu=int(mtu))
            wrote = []
        elif args.mode == "replay":
            wrote = replay(wsock, args.frames)
        else:
            wrote = half_handshake(wsock)
    wrote_at = time.monotonic()
    if wrote:
        say("wrote", frames=len(wrote), bytes=sum(len(f) for f in wrote), mtu=int(mtu))

    # Hold the link: keep the sockets open and do nothing until the receiver ends the connection.
    def connected():
        try:
            return bool(dprops.Get(DEVICE1, "Connected"))
        except dbus.DBusException:
            return False
    wait_until(lambda: stopped or not connected(), args.hold, every=0.2)
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

#!/usr/bin/python3
"""A stranger on blerecv's L2CAP channel (issue 22), for the lab's several-senders suite.

It uses kernel LE L2CAP sockets (lab/raw-l2cap.py's helpers), so the kernel makes the LE link
itself: no bluetoothd central, no GATT.

  channels: opens --count channels to the receiver's PSM over one LE link (the kernel puts every
      channel to the same peer on the link it has), writes nothing, and holds them until the
      receiver has closed them all or --hold seconds pass.
      JSON lines: {"event": "opened", "channels": N, "failed": F}, then "closed" ({"after_s",
      "open": channels still open}) each time the count falls, then "done" {"open": left}.
  storm: for --seconds, connects, writes one frame of junk, closes, and again, as fast as it can.
      Each connect makes a new LE link (the kernel drops the link once its last channel is closed).
      JSON line at the end: {"event": "storm", "connections": N, "failed": F, "seconds": S}.

    l2cap-stranger.py channels|storm --psm P [--adapter hci2] [--peer 00:AA:01:00:00:00]
                      [--count 20] [--hold 30] [--seconds 60]

Exit status: 0 done, 2 setup failure (no channel could be opened at all).
"""
import argparse
import ctypes
import importlib.util
import json
import os
import select
import socket
import struct
import sys
import time

LAB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lab", "raw-l2cap.py")
_spec = importlib.util.spec_from_file_location("raw_l2cap", LAB)
raw = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(raw)

T0 = time.monotonic()


def say(event, **fields):
    print(json.dumps({"event": event, "t": round(time.monotonic() - T0, 2), **fields}), flush=True)


def open_channel(args, address, atype, patience):
    """A connected L2CAP channel to the receiver, or None (the errno is logged)."""
    fd = raw.l2cap_socket(address, raw.ADDR_TYPES[atype], 672)
    sock = socket.socket(fileno=fd)
    # connect() on a Bluetooth socket honours SO_SNDTIMEO: do not wait out the kernel's 20 s.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, struct.pack("ll", patience, 0))
    sa = raw.sockaddr_l2(args.peer, args.psm, raw.BDADDR_LE_PUBLIC)
    if raw.libc.connect(sock.fileno(), sa, ctypes.sizeof(sa)) < 0:
        raw.log("stranger", "connect: %s" % os.strerror(ctypes.get_errno()))
        sock.close()
        return None
    return sock


def channels(args):
    address, atype = raw.adapter_address(args.adapter)
    held, failed = [], 0
    for _ in range(args.count):
        sock = open_channel(args, address, atype, 10)
        if sock is None:
            failed += 1
        else:
            held.append(sock)
    say("opened", channels=len(held), failed=failed)
    if not held:
        return 2
    opened_at = time.monotonic()
    poller = select.poll()
    for s in held:
        poller.register(s, select.POLLIN | select.POLLHUP | select.POLLERR)
    live = {s.fileno(): s for s in held}
    while live and time.monotonic() - opened_at < args.hold:
        for fd, ev in poller.poll(200):
            s = live.get(fd)
            if s is None:
                continue
            try:
                gone = bool(ev & (select.POLLHUP | select.POLLERR)) or s.recv(4096, socket.MSG_DONTWAIT) == b""
            except BlockingIOError:
                gone = False
            except OSError:
                gone = True
            if gone:
                poller.unregister(fd)
                del live[fd]
                s.close()
                say("closed", after_s=round(time.monotonic() - opened_at, 2), open=len(live))
    say("done", open=len(live), after_s=round(time.monotonic() - opened_at, 2))
    for s in live.values():
        s.close()
    return 0


def storm(args):
    address, atype = raw.adapter_address(args.adapter)
    junk = bytes([0x60, 0x00, 0x00, 0x20]) + os.urandom(34)
    n = failed = 0
    end = time.monotonic() + args.seconds
    while time.monotonic() < end:
        sock = open_channel(args, address, atype, 5)
        if sock is None:
            failed += 1
            time.sleep(0.05)
            continue
        n += 1
        try:
            sock.send(junk)
        except OSError:
            pass
        sock.close()
    say("storm", connections=n, failed=failed, seconds=args.seconds)
    return 0 if n else 2


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", choices=["channels", "storm"])
    ap.add_argument("--psm", type=lambda s: int(s, 0), required=True)
    ap.add_argument("--adapter", default="hci2")
    ap.add_argument("--peer", default="00:AA:01:00:00:00")
    ap.add_argument("--count", type=int, default=20)
    ap.add_argument("--hold", type=float, default=30.0)
    ap.add_argument("--seconds", type=float, default=60.0)
    args = ap.parse_args()
    return channels(args) if args.mode == "channels" else storm(args)


if __name__ == "__main__":
    sys.exit(main())

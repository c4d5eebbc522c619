#!/usr/bin/python3
"""Raw L2CAP goodput baseline for blesend (runs inside the lab VM, after bt-up.sh).

No protocol at all: a central streams N bytes in SDUs over an LE credit-based L2CAP channel
(connection-oriented channel, LE flow-control mode) to a listener that only counts them. It is
the L2CAP counterpart of raw-stream.py's AcquireWrite stream; blesend's L2CAP transport is
compared against it.

    raw-l2cap.py [run] [--bytes N] [--sdu S]          listener on hci0 + central on hci1
    raw-l2cap.py listen --bytes N                     the listener alone (prints its PSM)
    raw-l2cap.py connect --psm P --bytes N            the central alone

Python's socket module cannot express an LE address type, so the sockets are made through
ctypes on libc: socket(AF_BLUETOOTH, SOCK_SEQPACKET, BTPROTO_L2CAP), bind/connect/listen/accept
with a hand-packed struct sockaddr_l2 (bdaddr_type LE public or random, from Adapter1), then
wrapped in socket.socket(fileno=fd) for send/recv. BT_SECURITY is LOW (no pairing) and
BT_RCVMTU is set before listen/connect; BT_SNDMTU is read after connect.

Listener (default hci0): binds its adapter's address with PSM 0, so the kernel picks a dynamic
LE PSM (0x80-0xFF, which needs no privilege), registers a connectable LE advertisement through
bluetoothd (the kernel's LE connect scans for the peer, so the peer must advertise), prints
"L2CAP LISTEN <address> <type> <psm>", accepts one channel, counts the bytes and prints
{"received", "sdus", "t_first", "t_done", "complete"} (CLOCK_MONOTONIC).

Central (default hci1): binds its adapter's address and connect()s to the listener's address and
PSM; the kernel creates the LE link itself (no Device1.Connect). Then it sends N bytes in SDUs
of --sdu bytes (blocking socket with a 10 s SO_SNDTIMEO, or --nonblock; an EAGAIN is retried
after poll, and 10 s without progress is an error). Timing runs from the first
send to the listener's t_done. `run` prints one JSON line: {"mode": "l2cap", "bytes", "seconds",
"kib_per_s", "sdu", "received", "sdus", "sndmtu", "rcvmtu", "psm", "connect_seconds",
"submit_seconds", "eagain"}.
"""
import argparse
import ctypes
import ctypes.util
import errno
import json
import os
import select
import socket
import struct
import subprocess
import sys
import tempfile
import time

AF_BLUETOOTH = 31
SOCK_SEQPACKET = 5
BTPROTO_L2CAP = 0
SOL_BLUETOOTH = 274
BT_SECURITY = 4
BT_SECURITY_LOW = 1
BT_SNDMTU = 12
BT_RCVMTU = 13
BDADDR_LE_PUBLIC = 1
BDADDR_LE_RANDOM = 2
ADDR_TYPES = {"public": BDADDR_LE_PUBLIC, "random": BDADDR_LE_RANDOM}

ADV_PATH = "/com/blesend/lab/rawl2cap/adv"
STALL = 10  # seconds without a completed send() before the central gives up

libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def log(role, *parts):
    print("[%s %.3f]" % (role, time.monotonic()), *parts, file=sys.stderr, flush=True)


def check(ret, what):
    if ret < 0:
        e = ctypes.get_errno()
        raise OSError(e, "%s: %s" % (what, os.strerror(e)))
    return ret


def sockaddr_l2(address, psm=0, addr_type=BDADDR_LE_PUBLIC, cid=0):
    """struct sockaddr_l2 {sa_family_t; __le16 psm; bdaddr_t (LSB first); __le16 cid; u8 type}"""
    bdaddr = bytes(reversed(bytes.fromhex(address.replace(":", ""))))
    raw = struct.pack("<HH6sHB", AF_BLUETOOTH, psm, bdaddr, cid, addr_type)
    return ctypes.create_string_buffer(raw + b"\0", 14)  # padded to the kernel's sizeof (14)


def parse_sockaddr_l2(raw):
    _, psm, bdaddr, cid, addr_type = struct.unpack("<HH6sHB", raw[:13])
    return ":".join("%02X" % b for b in reversed(bdaddr)), psm, addr_type


def l2cap_socket(address, addr_type, rcvmtu):
    """A bound LE L2CAP SEQPACKET socket (PSM 0: the kernel picks a dynamic one), as an fd."""
    fd = check(libc.socket(AF_BLUETOOTH, SOCK_SEQPACKET, BTPROTO_L2CAP), "socket(AF_BLUETOOTH, L2CAP)")
    try:
        sec = struct.pack("BB", BT_SECURITY_LOW, 0)
        check(libc.setsockopt(fd, SOL_BLUETOOTH, BT_SECURITY, sec, len(sec)), "setsockopt(BT_SECURITY)")
        sa = sockaddr_l2(address, 0, addr_type)
        check(libc.bind(fd, sa, ctypes.sizeof(sa)), "bind(%s)" % address)
        mtu = struct.pack("<H", rcvmtu)
        check(libc.setsockopt(fd, SOL_BLUETOOTH, BT_RCVMTU, mtu, len(mtu)), "setsockopt(BT_RCVMTU=%d)" % rcvmtu)
    except OSError:
        os.close(fd)
        raise
    return fd


def getsockname(fd):
    buf = ctypes.create_string_buffer(32)
    n = ctypes.c_uint32(32)
    check(libc.getsockname(fd, buf, ctypes.byref(n)), "getsockname")
    return parse_sockaddr_l2(buf.raw)


def get_u16(fd, optname):
    buf = ctypes.create_string_buffer(2)
    n = ctypes.c_uint32(2)
    check(libc.getsockopt(fd, SOL_BLUETOOTH, optname, buf, ctypes.byref(n)), "getsockopt(%d)" % optname)
    return struct.unpack("<H", buf.raw)[0]


def adapter_address(adapter):
    """(address, "public"|"random") of hciN, from bluetoothd (Adapter1), else hciconfig."""
    try:
        import dbus
        props = dbus.Interface(dbus.SystemBus(private=True).get_object("org.bluez", "/org/bluez/" + adapter),
                               "org.freedesktop.DBus.Properties")
        return str(props.Get("org.bluez.Adapter1", "Address")), \
            str(props.Get("org.bluez.Adapter1", "AddressType"))
    except Exception as e:  # no dbus module, or no bluetoothd: btvirt controllers are public
        log("l2cap", "Adapter1 of %s not readable (%s); asking hciconfig" % (adapter, e))
        out = subprocess.run(["hciconfig", adapter], capture_output=True, text=True, check=True).stdout
        return out.split("BD Address: ")[1].split()[0], "public"


# --------------------------------------------------------------------------- listener

class Advertiser:
    """A connectable LE advertisement through bluetoothd, so the central's kernel finds us."""

    def __init__(self, adapter):
        import dbus
        import dbus.mainloop.glib
        import dbus.service
        from gi.repository import GLib
        dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
        bus = dbus.SystemBus()

        class Advertisement(dbus.service.Object):
            @dbus.service.method("org.freedesktop.DBus.Properties", in_signature="s", out_signature="a{sv}")
            def GetAll(self, interface):
                return {"Type": "peripheral", "LocalName": "blesend-rawl2", "Discoverable": dbus.Boolean(True)}

            @dbus.service.method("org.bluez.LEAdvertisement1")
            def Release(self):
                pass

        self.obj = Advertisement(bus, ADV_PATH)
        self.manager = dbus.Interface(bus.get_object("org.bluez", "/org/bluez/" + adapter),
                                      "org.bluez.LEAdvertisingManager1")
        loop = GLib.MainLoop()
        state = {}

        def ok():
            state["ok"] = True
            loop.quit()

        def err(e):
            state["err"] = e
            loop.quit()
        self.manager.RegisterAdvertisement(dbus.ObjectPath(ADV_PATH), {}, reply_handler=ok, error_handler=err)
        GLib.timeout_add_seconds(20, loop.quit)
        loop.run()
        if not state.get("ok"):
            raise RuntimeError("RegisterAdvertisement failed: %s" % state.get("err", "timeout"))

    def close(self):
        try:
            self.manager.UnregisterAdvertisement(ADV_PATH)
        except Exception:
            pass


def run_listener(args, out=sys.stdout):
    address, atype = adapter_address(args.adapter)
    lfd = l2cap_socket(address, ADDR_TYPES[atype], args.rcvmtu)
    check(libc.listen(lfd, 1), "listen")
    _, psm, _ = getsockname(lfd)
    adv = Advertiser(args.adapter) if args.advertise else None
    print("L2CAP LISTEN %s %s %d" % (address, atype, psm), file=out, flush=True)
    log("listen", "%s (%s) PSM 0x%02x, rcvmtu %d" % (address, atype, psm, args.rcvmtu))
    lsock = socket.socket(fileno=lfd)
    try:
        r, _, _ = select.select([lsock], [], [], args.timeout)
        if not r:
            raise RuntimeError("no connection within %.0f s" % args.timeout)
        cfd = check(libc.accept(lfd, None, None), "accept")
    finally:
        if adv:
            adv.close()
    peer = socket.socket(fileno=cfd)
    log("listen", "accepted a channel")
    buf = bytearray(65536)
    received = sdus = 0
    t_first = None
    end = time.monotonic() + args.timeout
    peer.settimeout(args.timeout)
    while received < args.bytes:
        try:
            n = peer.recv_into(buf)
        except socket.timeout:
            break
        if n == 0:
            break
        if t_first is None:
            t_first = time.monotonic()
        received += n
        sdus += 1
        if time.monotonic() > end:
            break
    t_done = time.monotonic()
    rep = {"received": received, "sdus": sdus, "t_first": t_first, "t_done": t_done,
           "complete": received >= args.bytes}
    print(json.dumps(rep), file=out, flush=True)
    # keep the channel open a moment so the central's close does not race our count
    peer.close()
    lsock.close()
    return 0 if rep["complete"] else 1


# --------------------------------------------------------------------------- central

def connect_and_stream(args):
    address, atype = adapter_address(args.adapter)
    fd = l2cap_socket(address, ADDR_TYPES[atype], args.rcvmtu)
    sa = sockaddr_l2(args.to, args.psm, ADDR_TYPES[args.to_type])
    t_c = time.monotonic()
    check(libc.connect(fd, sa, ctypes.sizeof(sa)), "connect(%s PSM 0x%02x)" % (args.to, args.psm))
    connect_s = time.monotonic() - t_c
    sndmtu = get_u16(fd, BT_SNDMTU)
    log("central", "connected in %.2f s, sndmtu %d" % (connect_s, sndmtu))
    sock = socket.socket(fileno=fd)
    if args.nonblock:
        sock.setblocking(False)
    else:  # a blocking send() that cannot go on returns EAGAIN after STALL seconds instead of hanging
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, struct.pack("ll", STALL, 0))
    if args.sdu > sndmtu:
        raise RuntimeError("--sdu %d is over the peer's MTU %d" % (args.sdu, sndmtu))
    payload = memoryview(bytes(i & 0xFF for i in range(args.sdu)))
    poller = select.poll()
    poller.register(sock, select.POLLOUT)
    sent = eagain = 0
    t0 = last = time.monotonic()
    while sent < args.bytes:
        if time.monotonic() - last > STALL:
            raise RuntimeError("send(%d bytes) made no progress for %d s (EAGAIN x%d after %d bytes)"
                               % (args.sdu, STALL, eagain, sent))
        n = min(args.sdu, args.bytes - sent)
        try:
            sock.send(payload[:n])
        except BlockingIOError:
            eagain += 1
            if eagain in (1, 1000, 100000):
                log("central", "send(%d bytes): EAGAIN #%d after %d bytes" % (n, eagain, sent))
            if not poller.poll(100):
                time.sleep(0.001)
            continue
        sent += n
        last = time.monotonic()
    submit = time.monotonic() - t0
    return sock, {"t0": t0, "submit_seconds": round(submit, 3), "connect_seconds": round(connect_s, 3),
                  "sndmtu": sndmtu, "eagain": eagain}


def run_connect(args):
    sock, rep = connect_and_stream(args)
    time.sleep(args.linger)
    sock.close()
    print(json.dumps(rep), flush=True)
    return 0


def forget_peers(pairs):
    """Best effort: remove the device objects the run left (bluetoothd keeps them, and a stale
    object with GATT-derived UUIDs hides later advertisements from a scan by service UUID)."""
    try:
        import dbus
        bus = dbus.SystemBus()
        for adapter, address in pairs:
            path = "/org/bluez/%s/dev_%s" % (adapter, address.replace(":", "_"))
            try:
                dbus.Interface(bus.get_object("org.bluez", "/org/bluez/" + adapter),
                               "org.bluez.Adapter1").RemoveDevice(dbus.ObjectPath(path))
            except dbus.DBusException:
                pass
    except Exception as e:
        log("central", "could not remove device objects:", e)


def run_both(args):
    cmd = [sys.executable, "-u", os.path.abspath(__file__), "listen", "--adapter", args.periph_adapter,
           "--bytes", str(args.bytes), "--rcvmtu", str(args.rcvmtu), "--timeout", str(args.timeout + 30)]
    if not args.advertise:
        cmd.append("--no-advertise")
    lst = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    try:
        line = lst.stdout.readline().split()
        if line[:2] != ["L2CAP", "LISTEN"]:
            raise RuntimeError("listener did not start (exit %s)" % lst.poll())
        args.to, args.to_type, args.psm = line[2], line[3], int(line[4])
        args.adapter = args.central_adapter
        sock, rep = connect_and_stream(args)
        got = lst.stdout.readline()
        sock.close()
        if not got:
            raise RuntimeError("listener ended without a report (exit %s)" % lst.wait())
        lrep = json.loads(got)
    finally:
        try:
            lst.wait(timeout=10)
        except subprocess.TimeoutExpired:
            lst.terminate()
            lst.wait()
    seconds = lrep["t_done"] - rep["t0"]
    result = {"mode": "l2cap", "bytes": args.bytes, "seconds": round(seconds, 3),
              "kib_per_s": round(lrep["received"] / seconds / 1024, 1), "sdu": args.sdu,
              "received": lrep["received"], "sdus": lrep["sdus"], "sndmtu": rep["sndmtu"],
              "rcvmtu": args.rcvmtu, "psm": args.psm, "connect_seconds": rep["connect_seconds"],
              "submit_seconds": rep["submit_seconds"], "eagain": rep["eagain"], "uid": os.getuid()}
    if args.forget:
        central_addr, _ = adapter_address(args.central_adapter)
        forget_peers([(args.central_adapter, args.to), (args.periph_adapter, central_addr)])
    print(json.dumps(result), flush=True)
    return 0 if lrep["received"] == args.bytes else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("role", nargs="?", default="run", choices=["run", "listen", "connect"])
    ap.add_argument("--bytes", type=int, default=1 << 20, help="bytes to stream (default 1 MiB)")
    ap.add_argument("--sdu", type=int, default=4096, help="bytes per send(), one SDU (default 4096)")
    ap.add_argument("--rcvmtu", type=int, default=None,
                    help="BT_RCVMTU of both sockets (default max(--sdu, 672))")
    ap.add_argument("--adapter", help="adapter for listen/connect (default hci0/hci1)")
    ap.add_argument("--periph-adapter", default="hci0")
    ap.add_argument("--central-adapter", default="hci1")
    ap.add_argument("--to", help="connect: the listener's address")
    ap.add_argument("--to-type", default="public", choices=sorted(ADDR_TYPES))
    ap.add_argument("--psm", type=lambda s: int(s, 0), help="connect: the listener's PSM")
    ap.add_argument("--no-advertise", dest="advertise", action="store_false",
                    help="listen: do not register an LE advertisement (someone else advertises)")
    ap.add_argument("--keep-devices", dest="forget", action="store_false",
                    help="run: leave the device objects in bluetoothd (default: remove them)")
    ap.add_argument("--nonblock", action="store_true",
                    help="central: non-blocking socket (EAGAIN -> poll) instead of a blocking one")
    ap.add_argument("--linger", type=float, default=1.0, help="connect: seconds before close")
    ap.add_argument("--timeout", type=float, default=120, help="seconds for each wait (default 120)")
    args = ap.parse_args()
    if args.rcvmtu is None:
        args.rcvmtu = max(args.sdu, 672)
    try:
        if args.role == "listen":
            args.adapter = args.adapter or args.periph_adapter
            return run_listener(args)
        if args.role == "connect":
            args.adapter = args.adapter or args.central_adapter
            if not (args.to and args.psm):
                ap.error("connect needs --to ADDRESS and --psm PSM")
            return run_connect(args)
        return run_both(args)
    except (RuntimeError, OSError) as e:
        log(args.role, "error:", e)
        return 1


if __name__ == "__main__":
    sys.exit(main())

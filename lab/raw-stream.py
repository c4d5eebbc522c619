#!/usr/bin/python3
"""Raw GATT goodput baseline for blesend (runs inside the lab VM, after bt-up.sh).

No protocol at all: a central streams N bytes of write-without-response to a peripheral
that only counts them. blesend's own goodput is compared against this number.

    raw-stream.py [run] [--bytes N] [--writevalue]    peripheral on hci0 + central on hci1
    raw-stream.py periph --expect N --report FILE     the peripheral alone
    raw-stream.py central --bytes N --report FILE     the central alone (FILE = periph's)

Peripheral (default hci0): GATT service SERVICE_UUID with one characteristic, flag
write-without-response, that serves AcquireWrite: bluetoothd then hands every incoming
Write Command to a socket we own, and we count the bytes there (WriteValue calls, used by
bluetoothd before the socket exists, are counted too). When EXPECT bytes have arrived it
writes {"received", "t_first", "t_done", "writes"} (CLOCK_MONOTONIC) to the report file.

Central (default hci1): scans for SERVICE_UUID, connects, then either AcquireWrite()s the
characteristic and writes min(MTU-3, 510)-byte chunks to the socket (EAGAIN -> poll for
POLLOUT, nothing is dropped), or with --writevalue calls WriteValue(type=command) per chunk
over D-Bus. --batch K (AcquireWrite only) hands K chunks to the kernel per sendmmsg(2) call, as
blesend does (32), instead of one per send(2). Timing runs from the first write to the
peripheral's t_done. Prints one JSON line:
{"mode", "bytes", "seconds", "kib_per_s", "mtu", "chunk", "received", "submit_seconds", "batch"}.

Why 510: BlueZ 5.66's GATT server rejects values longer than 510 bytes even at ATT MTU 517
(the length check includes the 2-byte handle); a longer Write Command is dropped silently.
"""
import argparse
import ctypes
import ctypes.util
import errno
import json
import os
import select
import socket
import subprocess
import sys
import tempfile
import time

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

SERVICE_UUID = "6f3c00ff-8c2e-4b6a-9d2f-7a1e5b0c4d10"
CHAR_UUID = "6f3c0001-8c2e-4b6a-9d2f-7a1e5b0c4d10"
BLUEZ = "org.bluez"
OBJECT_MANAGER = "org.freedesktop.DBus.ObjectManager"
PROPERTIES = "org.freedesktop.DBus.Properties"
ADAPTER1 = "org.bluez.Adapter1"
DEVICE1 = "org.bluez.Device1"
CHAR1 = "org.bluez.GattCharacteristic1"
BLUEZ_VALUE_CAP = 510
APP_PATH = "/com/blesend/lab/raw"
ADV_PATH = "/com/blesend/lab/raw/adv"
SO_SNDBUFFORCE = getattr(socket, "SO_SNDBUFFORCE", 32)


class IOVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


class MsgHdr(ctypes.Structure):
    _fields_ = [("name", ctypes.c_void_p), ("namelen", ctypes.c_uint32), ("iov", ctypes.POINTER(IOVec)),
                ("iovlen", ctypes.c_size_t), ("control", ctypes.c_void_p), ("controllen", ctypes.c_size_t),
                ("flags", ctypes.c_int)]


class MMsgHdr(ctypes.Structure):
    _fields_ = [("hdr", MsgHdr), ("len", ctypes.c_uint)]


class MessageBatch:
    """K datagrams of one payload for sendmmsg(2) (Python's socket module has no sendmmsg)."""

    def __init__(self, payload, k):
        self.libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        self.buffer = ctypes.create_string_buffer(bytes(payload), len(payload))
        self.iovs = (IOVec * k)()
        self.msgs = (MMsgHdr * k)()
        for i in range(k):
            self.iovs[i].base = ctypes.cast(self.buffer, ctypes.c_void_p)
            self.iovs[i].len = len(payload)
            self.msgs[i].hdr.iov = ctypes.pointer(self.iovs[i])
            self.msgs[i].hdr.iovlen = 1

    def send(self, fd, count, last_len):
        """Sends count datagrams (the last one last_len bytes); returns how many the kernel took, 0 on EAGAIN."""
        for i in range(count):
            self.iovs[i].len = last_len if i == count - 1 else len(self.buffer)
        n = self.libc.sendmmsg(fd, self.msgs, count, 0)
        if n < 0:
            e = ctypes.get_errno()
            if e in (errno.EAGAIN, errno.EWOULDBLOCK):
                return 0
            raise OSError(e, "sendmmsg: " + os.strerror(e))
        return n


def log(role, *parts):
    print("[%s %.3f]" % (role, time.monotonic()), *parts, file=sys.stderr, flush=True)


def adapter_path(name):
    return "/org/bluez/" + name


def power_on(bus, adapter):
    props = dbus.Interface(bus.get_object(BLUEZ, adapter_path(adapter)), PROPERTIES)
    if not props.Get(ADAPTER1, "Powered"):
        props.Set(ADAPTER1, "Powered", dbus.Boolean(True))
    return str(props.Get(ADAPTER1, "Address"))


def write_json_atomic(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f)
    os.rename(tmp, path)


# --------------------------------------------------------------------------- peripheral

class PropertyObject(dbus.service.Object):
    """A D-Bus object that answers org.freedesktop.DBus.Properties from self.properties()."""
    interface = None

    def properties(self):
        return {}

    @dbus.service.method(PROPERTIES, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        if interface != self.interface:
            raise dbus.exceptions.DBusException("org.bluez.Error.InvalidArguments", "no such interface")
        return self.properties()

    @dbus.service.method(PROPERTIES, in_signature="ss", out_signature="v")
    def Get(self, interface, name):
        return self.GetAll(interface)[name]


class Sink:
    """Counts received bytes; reports once `expect` bytes have arrived."""

    def __init__(self, expect, report, on_done):
        self.expect, self.report, self.on_done = expect, report, on_done
        self.received = 0
        self.writes = 0
        self.t_first = None
        self.done = False

    def add(self, n):
        if self.t_first is None:
            self.t_first = time.monotonic()
        self.received += n
        self.writes += 1
        if not self.done and self.received >= self.expect:
            self.finish(ok=True)

    def finish(self, ok):
        self.done = True
        write_json_atomic(self.report, {"received": self.received, "writes": self.writes,
                                        "t_first": self.t_first, "t_done": time.monotonic(),
                                        "complete": ok})
        self.on_done(ok)


class Characteristic(PropertyObject):
    interface = CHAR1

    def __init__(self, bus, path, service_path, sink):
        super().__init__(bus, path)
        self.path, self.service_path, self.sink = path, service_path, sink
        self.sockets = []

    def properties(self):
        return {"UUID": CHAR_UUID, "Service": dbus.ObjectPath(self.service_path),
                "Flags": dbus.Array(["write-without-response"], signature="s"),
                # its presence tells bluetoothd that this characteristic serves AcquireWrite
                "WriteAcquired": dbus.Boolean(bool(self.sockets))}

    @dbus.service.method(CHAR1, in_signature="aya{sv}")
    def WriteValue(self, value, options):
        self.sink.add(len(value))

    @dbus.service.method(CHAR1, in_signature="a{sv}", out_signature="hq")
    def AcquireWrite(self, options):
        mtu = int(options.get("mtu", 23))
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        # bluetoothd writes with MSG_DONTWAIT and drops a packet on EAGAIN: give its end
        # plenty of send buffer so a slow moment on our side loses nothing.
        try:
            theirs.setsockopt(socket.SOL_SOCKET, SO_SNDBUFFORCE, 4 << 20)
        except OSError:
            theirs.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
        ours.setblocking(False)
        self.sockets.append(ours)
        GLib.io_add_watch(ours.fileno(), GLib.PRIORITY_HIGH,
                          GLib.IO_IN | GLib.IO_HUP | GLib.IO_ERR, self._readable, ours)
        fd = dbus.types.UnixFd(theirs)  # dbus-python duplicates the descriptor
        theirs.close()
        log("periph", "AcquireWrite: device=%s mtu=%d" % (options.get("device", "?"), mtu))
        return fd, dbus.UInt16(mtu)

    def _readable(self, fd, condition, sock):
        while True:
            try:
                data = sock.recv(65536)
            except BlockingIOError:
                return True
            except OSError as e:
                log("periph", "socket error:", e)
                data = b""
            if not data:
                log("periph", "write socket closed (received %d bytes so far)" % self.sink.received)
                self.sockets.remove(sock)
                sock.close()
                return False
            self.sink.add(len(data))


class Service(PropertyObject):
    interface = "org.bluez.GattService1"

    def __init__(self, bus, path, char_path):
        super().__init__(bus, path)
        self.path, self.char_path = path, char_path

    def properties(self):
        return {"UUID": SERVICE_UUID, "Primary": dbus.Boolean(True),
                "Characteristics": dbus.Array([dbus.ObjectPath(self.char_path)], signature="o")}


class Application(dbus.service.Object):
    def __init__(self, bus, sink):
        super().__init__(bus, APP_PATH)
        self.service = Service(bus, APP_PATH + "/service0", APP_PATH + "/service0/char0")
        self.char = Characteristic(bus, APP_PATH + "/service0/char0", APP_PATH + "/service0", sink)

    @dbus.service.method(OBJECT_MANAGER, out_signature="a{oa{sa{sv}}}")
    def GetManagedObjects(self):
        return {dbus.ObjectPath(self.service.path): {Service.interface: self.service.properties()},
                dbus.ObjectPath(self.char.path): {CHAR1: self.char.properties()}}


class Advertisement(PropertyObject):
    interface = "org.bluez.LEAdvertisement1"

    def properties(self):
        return {"Type": "peripheral", "ServiceUUIDs": dbus.Array([SERVICE_UUID], signature="s"),
                "LocalName": "blesend-raw", "Discoverable": dbus.Boolean(True)}

    @dbus.service.method("org.bluez.LEAdvertisement1")
    def Release(self):
        log("periph", "advertisement released")


def run_peripheral(args):
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SystemBus()
    loop = GLib.MainLoop()
    status = {"ok": False}

    def done(ok):
        status["ok"] = ok
        GLib.timeout_add(200, loop.quit)  # let bluetoothd's last calls complete

    sink = Sink(args.expect, args.report, done)
    address = power_on(bus, args.adapter)
    app = Application(bus, sink)  # noqa: F841 (kept alive for the main loop)
    adv = Advertisement(bus, ADV_PATH)
    adapter = bus.get_object(BLUEZ, adapter_path(args.adapter))
    pending = {"n": 2}

    def registered(what):
        def cb():
            log("periph", what, "registered")
            pending["n"] -= 1
            if pending["n"] == 0:
                print("PERIPH READY %s %s" % (args.adapter, address), flush=True)
        return cb

    def failed(what):
        def cb(err):
            log("periph", what, "registration failed:", err)
            status["ok"] = False
            loop.quit()
        return cb

    dbus.Interface(adapter, "org.bluez.GattManager1").RegisterApplication(
        dbus.ObjectPath(APP_PATH), {}, reply_handler=registered("GATT application"),
        error_handler=failed("GATT application"))
    dbus.Interface(adapter, "org.bluez.LEAdvertisingManager1").RegisterAdvertisement(
        dbus.ObjectPath(ADV_PATH), {}, reply_handler=registered("advertisement"),
        error_handler=failed("advertisement"))

    def give_up():
        log("periph", "timeout: received %d of %d bytes" % (sink.received, args.expect))
        if not sink.done:
            sink.finish(ok=False)
        return False

    GLib.timeout_add_seconds(int(args.timeout), give_up)
    loop.run()
    return 0 if status["ok"] else 1


# --------------------------------------------------------------------------- central

class Central:
    def __init__(self, args):
        dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
        self.args = args
        self.bus = dbus.SystemBus()
        self.ctx = GLib.MainContext.default()
        self.apath = adapter_path(args.adapter)

    def pump_until(self, cond, timeout, what, every=0.05):
        """Run the GLib main context until cond() is true, checking it every `every` s."""
        end = time.monotonic() + timeout
        while True:
            v = cond()
            if v:
                return v
            if time.monotonic() >= end:
                raise RuntimeError("timed out after %.0fs waiting for %s" % (timeout, what))
            slice_end = min(end, time.monotonic() + every)
            while time.monotonic() < slice_end:
                if not self.ctx.iteration(False):
                    time.sleep(0.005)

    def objects(self):
        return dbus.Interface(self.bus.get_object(BLUEZ, "/"), OBJECT_MANAGER).GetManagedObjects()

    def find_peer(self):
        for path, ifaces in self.objects().items():
            dev = ifaces.get(DEVICE1)
            if dev and str(dev.get("Adapter")) == self.apath and \
                    SERVICE_UUID in [str(u) for u in dev.get("UUIDs", [])]:
                return str(path)
        return None

    def forget_stale_devices(self, adapter):
        """Remove disconnected, unpaired devices left by an earlier run on this adapter: BlueZ
        keeps their GATT-derived UUIDs and ignores the new advertisement's UUIDs for them."""
        for path, ifaces in self.objects().items():
            dev = ifaces.get(DEVICE1)
            if dev and str(dev.get("Adapter")) == self.apath and not dev.get("Connected") \
                    and not dev.get("Paired"):
                log("central", "removing stale device", path)
                adapter.RemoveDevice(dbus.ObjectPath(path))

    def connect(self):
        power_on(self.bus, self.args.adapter)
        adapter = dbus.Interface(self.bus.get_object(BLUEZ, self.apath), ADAPTER1)
        self.forget_stale_devices(adapter)
        peer = self.find_peer()
        if not peer:
            adapter.SetDiscoveryFilter({"Transport": "le",
                                        "UUIDs": dbus.Array([SERVICE_UUID], signature="s")})
            adapter.StartDiscovery()
            try:
                peer = self.pump_until(self.find_peer, self.args.timeout, "the peripheral's advertisement")
            finally:
                try:
                    adapter.StopDiscovery()
                except dbus.DBusException:
                    pass
        log("central", "peer", peer)
        self.dev_path = peer
        self.dev = dbus.Interface(self.bus.get_object(BLUEZ, peer), DEVICE1)
        dprops = dbus.Interface(self.bus.get_object(BLUEZ, peer), PROPERTIES)
        self.dev.Connect(timeout=60)
        self.pump_until(lambda: bool(dprops.Get(DEVICE1, "ServicesResolved")), 30, "ServicesResolved")
        for path, ifaces in self.objects().items():
            c = ifaces.get(CHAR1)
            if c and str(path).startswith(peer + "/") and str(c["UUID"]) == CHAR_UUID:
                self.char_path = str(path)
                break
        else:
            raise RuntimeError("characteristic %s not found on %s" % (CHAR_UUID, peer))
        self.char = dbus.Interface(self.bus.get_object(BLUEZ, self.char_path), CHAR1)

    def stream_acquirewrite(self, total):
        fd, mtu = self.char.AcquireWrite({})
        sock = socket.socket(fileno=fd.take())
        sock.setblocking(False)  # it already is; EAGAIN is handled by polling
        mtu = int(mtu)
        chunk = min(mtu - 3, BLUEZ_VALUE_CAP)
        payload = memoryview(bytes(i & 0xFF for i in range(chunk)))
        batch = MessageBatch(payload, self.args.batch) if self.args.batch > 1 else None
        poller = select.poll()
        poller.register(sock, select.POLLOUT)
        sent = 0
        t0 = time.monotonic()
        while sent < total:
            if batch:
                count = min(self.args.batch, -(-(total - sent) // chunk))
                last = min(chunk, total - sent - (count - 1) * chunk)
                taken = batch.send(sock.fileno(), count, last)
                sent += chunk * taken if taken < count else chunk * (count - 1) + last
                if taken == count:
                    continue
            else:
                n = min(chunk, total - sent)
                try:
                    sock.send(payload[:n])
                    sent += n
                    continue
                except BlockingIOError:
                    pass
            if not poller.poll(10000):
                raise RuntimeError("write socket not writable for 10 s (%d bytes sent)" % sent)
        return sock, mtu, chunk, t0, time.monotonic() - t0

    def stream_writevalue(self, total):
        props = dbus.Interface(self.bus.get_object(BLUEZ, self.char_path), PROPERTIES)
        mtu = int(props.Get(CHAR1, "MTU"))
        chunk = min(mtu - 3, BLUEZ_VALUE_CAP)
        full = dbus.ByteArray(bytes(i & 0xFF for i in range(chunk)))
        options = {"type": "command"}
        sent = 0
        t0 = time.monotonic()
        while sent < total:
            n = min(chunk, total - sent)
            self.char.WriteValue(full if n == chunk else dbus.ByteArray(bytes(full[:n])), options)
            sent += n
        return None, mtu, chunk, t0, time.monotonic() - t0

    def run(self):
        args = self.args
        self.connect()
        stream = self.stream_writevalue if args.writevalue else self.stream_acquirewrite
        sock, mtu, chunk, t0, submit = stream(args.bytes)

        def report():
            try:
                with open(args.report) as f:
                    return json.load(f)
            except (OSError, ValueError):
                return None
        rep = self.pump_until(report, args.timeout, "the peripheral's report")
        if sock:
            sock.close()
        seconds = rep["t_done"] - t0
        result = {"mode": "writevalue" if args.writevalue else "acquirewrite",
                  "bytes": args.bytes, "seconds": round(seconds, 3),
                  "kib_per_s": round(rep["received"] / seconds / 1024, 1),
                  "mtu": mtu, "chunk": chunk, "received": rep["received"],
                  "submit_seconds": round(submit, 3), "batch": 1 if args.writevalue else args.batch}
        try:
            self.dev.Disconnect()
        except dbus.DBusException as e:
            log("central", "Disconnect:", e)
        return result


def run_central(args):
    result = Central(args).run()
    print(json.dumps(result), flush=True)
    return 0 if result["received"] == args.bytes else 1


# --------------------------------------------------------------------------- both

def run_both(args):
    workdir = tempfile.mkdtemp(prefix="raw-stream.", dir=os.environ.get("TMPDIR", "/tmp"))
    report = os.path.join(workdir, "report.json")
    cmd = [sys.executable, "-u", os.path.abspath(__file__), "periph", "--adapter", args.periph_adapter,
           "--expect", str(args.bytes), "--report", report, "--timeout", str(int(args.timeout) + 30)]
    periph = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    try:
        line = periph.stdout.readline()
        if not line.startswith("PERIPH READY"):
            raise RuntimeError("peripheral did not start (exit %s)" % periph.poll())
        log("central", line.strip())
        args.adapter, args.report = args.central_adapter, report
        return run_central(args)
    finally:
        try:
            periph.wait(timeout=5)
        except subprocess.TimeoutExpired:
            periph.terminate()
            periph.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("role", nargs="?", default="run", choices=["run", "periph", "central"])
    ap.add_argument("--bytes", type=int, default=1 << 20, help="bytes to stream (default 1 MiB)")
    ap.add_argument("--writevalue", action="store_true",
                    help="use D-Bus WriteValue(type=command) per chunk instead of AcquireWrite")
    ap.add_argument("--batch", type=int, default=1,
                    help="AcquireWrite: chunks per sendmmsg(2) call (default 1: one send(2) per chunk; blesend uses 32)")
    ap.add_argument("--adapter", help="adapter for periph/central (default hci0/hci1)")
    ap.add_argument("--periph-adapter", default="hci0")
    ap.add_argument("--central-adapter", default="hci1")
    ap.add_argument("--expect", type=int, help="periph: bytes to wait for (default --bytes)")
    ap.add_argument("--report", help="periph: file to write the result to; central: file to read it from")
    ap.add_argument("--timeout", type=float, default=180, help="seconds for each wait (default 180)")
    args = ap.parse_args()
    try:
        if args.role == "periph":
            args.adapter = args.adapter or "hci0"
            args.expect = args.expect or args.bytes
            if not args.report:
                ap.error("periph needs --report FILE")
            return run_peripheral(args)
        if args.role == "central":
            args.adapter = args.adapter or "hci1"
            if not args.report:
                ap.error("central needs --report FILE (the peripheral's)")
            return run_central(args)
        return run_both(args)
    except (RuntimeError, dbus.DBusException, OSError) as e:
        log(args.role, "error:", e)
        return 1


if __name__ == "__main__":
    sys.exit(main())

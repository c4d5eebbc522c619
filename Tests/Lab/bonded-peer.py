#!/usr/bin/python3
"""A device bonded with the receiver's adapter, for the lab's fault suite (issue 31, item 1).

hci1 plays the user's keyboard or headset: bonded with hci0 (the receiver's adapter), it reconnects
while blerecv runs and opens nothing of the transfer service. blerecv must leave its link up.

  pair:   hci1 pairs with hci0 (Device1.Pair, LE, Just Works) while a NoInputNoOutput agent that
          accepts everything is the default agent (bluetoothd asks the responder's agent to
          confirm), and hci0 advertises, connectable, through an advertisement of this script's
          (run it before blerecv: while blerecv ran, the pairing was cut with the link). Then hci1
          disconnects. Checks Paired on both sides.
  hold:   hci1 connects to hci0 (blerecv advertising) and keeps the link for --seconds, touching
          nothing; then disconnects.
  forget: removes each side's device object (the bond with it), so later cases meet no bond.

    bonded-peer.py pair|hold|forget [--receiver hci0] [--peer hci1] [--seconds 30]

Prints one JSON object per step on stdout. Exit status: 0 done (hold: still connected after
--seconds), 3 hold: the link was ended before, 2 setup failure (pair: the pairing failed).
"""
import argparse
import sys
import time

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

from labbus import ADAPTER1, BLUEZ, DEVICE1, PROPERTIES, say, wait_until

AGENT_MANAGER1 = "org.bluez.AgentManager1"
AGENT_PATH = "/blesend/lab/agent"
ADVERTISEMENT_PATH = "/blesend/lab/advertisement"
ADVERTISING_MANAGER1 = "org.bluez.LEAdvertisingManager1"


class Agent(dbus.service.Object):
    """Accepts every request, as a person answering "yes" would (NoInputNoOutput: Just Works)."""

    @dbus.service.method("org.bluez.Agent1", in_signature="", out_signature="")
    def Release(self):
        pass

    @dbus.service.method("org.bluez.Agent1", in_signature="ou", out_signature="")
    def RequestConfirmation(self, device, passkey):
        say("agent", request="confirmation", device=str(device))

    @dbus.service.method("org.bluez.Agent1", in_signature="o", out_signature="")
    def RequestAuthorization(self, device):
        say("agent", request="authorization", device=str(device))

    @dbus.service.method("org.bluez.Agent1", in_signature="os", out_signature="")
    def AuthorizeService(self, device, uuid):
        pass

    @dbus.service.method("org.bluez.Agent1", in_signature="", out_signature="")
    def Cancel(self):
        say("agent", request="cancel")


class Advertisement(dbus.service.Object):
    """A connectable advertisement with nothing in it: hci0 reachable before blerecv runs."""

    @dbus.service.method(PROPERTIES, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return {"Type": "peripheral"}

    @dbus.service.method("org.bluez.LEAdvertisement1", in_signature="", out_signature="")
    def Release(self):
        pass


def call_async(method, *args, timeout=30):
    """Calls `method` with a main loop running, so that bluetoothd's calls back into this process
    (an advertisement's properties, the agent's questions) are answered meanwhile."""
    loop = GLib.MainLoop()
    result = {}

    def done(*reply):
        result["reply"] = reply
        loop.quit()

    def failed(error):
        result["error"] = error
        loop.quit()
    method(*args, reply_handler=done, error_handler=failed, timeout=timeout)
    GLib.timeout_add_seconds(int(timeout) + 5, loop.quit)
    loop.run()
    if "error" in result:
        raise RuntimeError("%s failed: %s" % (getattr(method, "_method_name", "a call"), result["error"]))
    if "reply" not in result:
        raise RuntimeError("%s did not answer in %d s" % (getattr(method, "_method_name", "a call"), timeout + 5))


def address(bus, adapter):
    return str(dbus.Interface(bus.get_object(BLUEZ, "/org/bluez/" + adapter), PROPERTIES).Get(ADAPTER1, "Address"))


def device_path(adapter, addr):
    return "/org/bluez/%s/dev_%s" % (adapter, addr.replace(":", "_"))


def prop(bus, path, name):
    try:
        return dbus.Interface(bus.get_object(BLUEZ, path), PROPERTIES).Get(DEVICE1, name)
    except dbus.DBusException:
        return None


def find_receiver(bus, args):
    """hci1's device object for hci0: made by a short LE scan when hci1 has none."""
    path = device_path(args.peer, address(bus, args.receiver))
    if prop(bus, path, "Address") is not None:
        return path
    adapter = dbus.Interface(bus.get_object(BLUEZ, "/org/bluez/" + args.peer), ADAPTER1)
    adapter.SetDiscoveryFilter({"Transport": "le"})
    adapter.StartDiscovery()
    try:
        found = wait_until(lambda: prop(bus, path, "Address") is not None, 20, every=0.2)
    finally:
        try:
            adapter.StopDiscovery()
        except dbus.DBusException:
            pass
    if not found:
        raise RuntimeError("%s did not see %s advertising in 20 s" % (args.peer, args.receiver))
    return path


def pair(bus, args):
    agent = Agent(bus, AGENT_PATH)
    advertisement = Advertisement(bus, ADVERTISEMENT_PATH)
    manager = dbus.Interface(bus.get_object(BLUEZ, "/org/bluez"), AGENT_MANAGER1)
    advertising = dbus.Interface(bus.get_object(BLUEZ, "/org/bluez/" + args.receiver), ADVERTISING_MANAGER1)
    manager.RegisterAgent(AGENT_PATH, "NoInputNoOutput")
    manager.RequestDefaultAgent(AGENT_PATH)
    try:
        call_async(advertising.RegisterAdvertisement, ADVERTISEMENT_PATH, {}, timeout=10)
        path = find_receiver(bus, args)
        device = dbus.Interface(bus.get_object(BLUEZ, path), DEVICE1)
        call_async(device.Pair, timeout=40)
        back = device_path(args.receiver, address(bus, args.peer))
        if not wait_until(lambda: bool(prop(bus, path, "Paired")) and bool(prop(bus, back, "Paired")), 10, every=0.2):
            raise RuntimeError("not paired on both sides: %s %s, %s %s" % (
                args.peer, prop(bus, path, "Paired"), args.receiver, prop(bus, back, "Paired")))
        say("paired", device=path, bonded=bool(prop(bus, path, "Bonded")), receiver_side=back)
        try:
            device.Disconnect(timeout=10)
        except dbus.DBusException:
            pass
        wait_until(lambda: not prop(bus, path, "Connected"), 10, every=0.2)
    finally:
        for undo in (lambda: advertising.UnregisterAdvertisement(ADVERTISEMENT_PATH, timeout=5),
                     lambda: manager.UnregisterAgent(AGENT_PATH, timeout=5)):
            try:
                undo()
            except dbus.DBusException:
                pass
        agent.remove_from_connection()
        advertisement.remove_from_connection()
    return 0


def hold(bus, args):
    path = device_path(args.peer, address(bus, args.receiver))
    if not prop(bus, path, "Paired"):
        raise RuntimeError("%s is not paired with %s: run pair first" % (args.peer, args.receiver))
    device = dbus.Interface(bus.get_object(BLUEZ, path), DEVICE1)
    device.Connect(timeout=30)
    if not wait_until(lambda: bool(prop(bus, path, "Connected")), 10, every=0.2):
        raise RuntimeError("no link after Connect")
    up = time.monotonic()
    say("connected", device=path)
    kept = not wait_until(lambda: not prop(bus, path, "Connected"), args.seconds, every=0.5)
    held_s = round(time.monotonic() - up, 2)
    if not kept:
        say("dropped", after_s=held_s)
        return 3
    say("held", seconds=held_s)
    try:
        device.Disconnect(timeout=10)
    except dbus.DBusException:
        pass
    wait_until(lambda: not prop(bus, path, "Connected"), 10, every=0.2)
    return 0


def forget(bus, args):
    for adapter, other in ((args.peer, args.receiver), (args.receiver, args.peer)):
        path = device_path(adapter, address(bus, other))
        try:
            dbus.Interface(bus.get_object(BLUEZ, "/org/bluez/" + adapter), ADAPTER1).RemoveDevice(path)
            say("removed", device=path)
        except dbus.DBusException as e:
            say("not-removed", device=path, message=str(e))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("step", choices=["pair", "hold", "forget"])
    ap.add_argument("--receiver", default="hci0")
    ap.add_argument("--peer", default="hci1")
    ap.add_argument("--seconds", type=float, default=30)
    args = ap.parse_args()
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SystemBus()
    try:
        return {"pair": pair, "hold": hold, "forget": forget}[args.step](bus, args)
    except (RuntimeError, dbus.DBusException) as e:
        say("error", message=str(e))
        return 2


if __name__ == "__main__":
    sys.exit(main())

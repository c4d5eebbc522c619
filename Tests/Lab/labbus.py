"""What the lab's Python helpers share (Tests/Lab/hostile-central.py, bonded-peer.py): BlueZ's
names on the system bus, one JSON line per step on stdout, and a bounded wait."""
import json
import time

BLUEZ = "org.bluez"
PROPERTIES = "org.freedesktop.DBus.Properties"
ADAPTER1 = "org.bluez.Adapter1"
DEVICE1 = "org.bluez.Device1"
T0 = time.monotonic()


def say(event, **fields):
    """One JSON object on stdout: the event, seconds since the helper started, the fields."""
    print(json.dumps({"event": event, "t": round(time.monotonic() - T0, 2), **fields}), flush=True)


def wait_until(cond, timeout, every=0.1):
    """Calls `cond` every `every` seconds until it returns something true or `timeout` passes;
    returns its last value."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = cond()
        if value:
            return value
        time.sleep(every)
    return cond()

#!/usr/bin/env python3
# blesend lab, on the HOST (not in the VM): N virtual LE controllers from Google's bumble on one
# in-process radio (bumble.link.LocalLink), each reachable as an H4 byte stream on a Unix socket
# DIR/hciN.sock. vmrun.sh (BT_CONTROLLERS=bumble) starts this before QEMU and hands each socket to
# the guest as a PCI serial port; bt-up.sh attaches the ports in order with btattach, so controller
# i becomes the guest's hci<i>. Unlike btvirt, a bumble controller numbers its links (handles
# 0x0001, 0x0002, ...), so one controller can hold several LE links at once.
#
# Usage: bumble-link.py DIR N [--raw K]
#   Controller i gets the public address 00:AA:01:<i>:00:<i> (what btvirt gives its i-th
#   controller, which the lab suites expect). --raw K adds K more controllers on the same link
#   (sockets DIR/rawN.sock, addresses 00:AA:01:<n>:00:<n> continuing the count) for a bumble host
#   (a non-BlueZ central or peripheral) to drive instead of the guest kernel.
#   Writes DIR/ready once every socket listens; runs until killed (SIGTERM).
# Env: BT_BUMBLE_LOG  python log level (default WARNING); logs go to stderr.
import argparse
import asyncio
import logging
import os
import signal
import sys

from bumble import core, hci, ll
from bumble.controller import Controller
from bumble.link import LocalLink
from bumble.transport import open_transport

# Where bumble's in-process radio (0.0.236) falls short of a real one with BlueZ's hosts, which use
# their public addresses; the lab fixes these four here, without touching bumble itself:
# 1. LE data is sent from the sending controller's *random* address, so a peer that knows the link
#    by the public address drops every packet ("no connection for 00:00:00:00:00:00"): GATT never
#    completes. LabLink sends it from the link's own address.
# 2. A central's CONNECT_IND reaching an advertiser that has meanwhile stopped (another central was
#    first) is ignored by the peripheral, yet the central reports the link as up for good. A real
#    central sees no answer and reports "Connection Failed to be Established" (0x3E): LabLink does.
# 3. HCI_Reset leaves links, advertising and scanning as they were, so a host's power-off leaves
#    its peers connected to nothing. LabController drops its links at reset (the peers get a
#    Disconnection Complete with 0x08, connection timeout, as a supervision timeout would give).
# 4. The legacy LE Connection Complete event where the host asked for the enhanced one (below).


def _accepts(c: Controller, advertiser_address: hci.Address) -> bool:
    adv = c.le_legacy_advertiser
    if adv.enabled and adv.address == advertiser_address:
        return True
    return any(s.enabled and s.address == advertiser_address for s in c.advertising_sets.values())


class LabLink(LocalLink):
    def send_acl_data(self, sender_controller, destination_address, transport, data):
        if transport != core.PhysicalTransport.LE:
            return super().send_acl_data(sender_controller, destination_address, transport, data)
        conn = sender_controller.le_connections.get(destination_address)
        source = conn.self_address if conn else sender_controller.random_address
        dest = self.find_le_controller(destination_address)
        if dest is not None:
            asyncio.get_running_loop().call_soon(dest.on_link_acl_data, source, transport, data)

    def send_advertising_pdu(self, sender_controller, packet):
        if not isinstance(packet, ll.ConnectInd):
            return super().send_advertising_pdu(sender_controller, packet)

        def deliver():
            others = [c for c in self.controllers if c is not sender_controller]
            accepted = any(_accepts(c, packet.advertiser_address) for c in others)
            for c in others:
                c.on_ll_advertising_pdu(packet)
            if accepted:
                return
            conn = sender_controller.le_connections.get(packet.advertiser_address)
            if conn is None:
                return
            # A real central gives up after six connection intervals without an answer.
            delay = 6 * packet.interval * 1.25e-3
            logging.getLogger('bumble-link').info(
                '%s: CONNECT_IND to %s not taken (not advertising): 0x3E in %.0f ms',
                sender_controller.name, packet.advertiser_address, delay * 1000)

            def fail():
                if sender_controller.le_connections.get(packet.advertiser_address) is conn:
                    sender_controller.on_le_disconnected(
                        conn, hci.HCI_ErrorCode.CONNECTION_FAILED_TO_BE_ESTABLISHED_ERROR)

            asyncio.get_running_loop().call_later(delay, fail)

        asyncio.get_running_loop().call_soon(deliver)


class LabController(Controller):
    def send_hci_packet(self, packet):
        # Bumble answers every LE connection with the legacy LE Connection Complete event. A host
        # that unmasked LE Enhanced Connection Complete (LE event mask bit 9, as Linux does for a
        # controller with LL privacy or extended advertising) must get that one instead; Linux
        # waits for it to finish its Create Connection, and without it cancels the connection
        # attempt 4 s later while the link is already up, after which its Disconnect of that link
        # never reaches the controller.
        if isinstance(packet, hci.HCI_LE_Connection_Complete_Event) and self.le_event_mask & (1 << 9):
            packet = hci.HCI_LE_Enhanced_Connection_Complete_Event(
                status=packet.status, connection_handle=packet.connection_handle, role=packet.role,
                peer_address_type=packet.peer_address_type, peer_address=packet.peer_address,
                local_resolvable_private_address=hci.Address.ANY_RANDOM,
                peer_resolvable_private_address=hci.Address.ANY_RANDOM,
                connection_interval=packet.connection_interval,
                peripheral_latency=packet.peripheral_latency,
                supervision_timeout=packet.supervision_timeout,
                central_clock_accuracy=packet.central_clock_accuracy)
        super().send_hci_packet(packet)

    def on_hci_reset_command(self, command):
        for conn in list(self.le_connections.values()):
            try:
                conn.send_ll_control_pdu(ll.TerminateInd(hci.HCI_ErrorCode.CONNECTION_TIMEOUT_ERROR))
            except core.InvalidArgumentError:
                pass   # the peer is gone already
        self.le_connections.clear()
        if self.le_legacy_advertiser.enabled:
            self.le_legacy_advertiser.stop()
        for adv in self.advertising_sets.values():
            if adv.enabled:
                adv.stop()
        self.advertising_sets.clear()
        self.le_scan_enable = False
        self.pending_le_connection = None
        return super().on_hci_reset_command(command)


def address(i: int) -> str:
    return f'00:AA:01:{i:02X}:00:{i:02X}'


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument('dir')
    ap.add_argument('n', type=int)
    ap.add_argument('--raw', type=int, default=0)
    args = ap.parse_args()

    link = LabLink()
    names = [f'hci{i}' for i in range(args.n)] + [f'raw{i}' for i in range(args.n, args.n + args.raw)]
    transports = []
    for i, name in enumerate(names):
        path = os.path.join(args.dir, f'{name}.sock')
        if os.path.exists(path):
            os.unlink(path)
        t = await open_transport(f'unix-server:{path}')
        transports.append(t)
        LabController(name, host_source=t.source, host_sink=t.sink, link=link,
                   public_address=address(i))
        print(f'bumble-link: {name} {address(i)} on {path}', file=sys.stderr, flush=True)
    with open(os.path.join(args.dir, 'ready'), 'w') as f:
        f.write(' '.join(names) + '\n')

    stop = asyncio.get_running_loop().create_future()
    for s in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(s, lambda: stop.done() or stop.set_result(None))
    await stop
    for t in transports:
        await t.close()


if __name__ == '__main__':
    logging.basicConfig(level=os.environ.get('BT_BUMBLE_LOG', 'WARNING').upper(),
                        format='%(asctime)s %(name)s %(levelname)s %(message)s')
    asyncio.run(main())

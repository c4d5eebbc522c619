import DBus
import L2CAP

/// The L2CAP row of `TransportChoice.table`: an LE credit-based channel on the PSM the receiver
/// publishes in the transfer service; `auto` falls back to GATT.
enum L2CAPTransport {
    /// How long a channel may take to open before `auto` falls back to GATT.
    static var openTimeout: Duration { GattCentral.l2capTimeout }

    static func openOnCentral(_ link: CentralLink) async throws(BlueZError) -> Result<OpenedTransport, BlueZError>? {
        let channel: L2CAPChannel
        do throws(L2CAPError) {
            guard let opened = try await openChannel(link) else { return nil }
            channel = opened
        } catch {
            return .failure(.l2cap(error))
        }
        // The kernel closes the channel's socket when the link drops; bluetoothd's word that the
        // device disconnected ends it too, as for a GATT link.
        let watch: Task<Void, Never>
        do {
            watch = try await GattCentral.closeOnDisconnect(channel, bus: link.bus, device: link.device)
        } catch {
            await channel.close()
            throw error
        }
        return .success(OpenedTransport(transport: channel) {
            watch.cancel()
            await link.release()
        })
    }

    /// Opens the channel the receiver publishes in the transfer service's PSM characteristic, on
    /// the LE link already up; nil when it publishes none.
    private static func openChannel(_ link: CentralLink) async throws(L2CAPError) -> L2CAPChannel? {
        let bus = link.bus
        guard let value = await GattCentral.readServiceValue(
                  bus, transferCharacteristic: link.transferCharacteristic, uuid: BlesendGATT.psmCharacteristicUUID),
              let psm = BlesendGATT.psm(fromValue: value),
              let objects = try? await bus.managedObjects(destination: BlueZ.service, path: "/")
        else { return nil }
        guard let props = objects[link.device]?[BlueZ.device], let text = props["Address"]?.string,
              let peer = BluetoothAddress(text, bluezType: props["AddressType"]?.string ?? "public")
        else { throw .addressUnknown(.peer) }
        guard let local = await BlueZAdapter.address(bus, adapterPath: link.adapterPath) else { throw .addressUnknown(.adapter) }
        return try await L2CAPConnector.connect(
            from: local, to: peer, psm: psm, receiveMTU: GattPeripheral.l2capReceiveMTU, timeout: openTimeout)
    }

    /// Listens on a dynamic PSM of the adapter, for the service to publish; where the kernel or the
    /// adapter cannot, says why.
    static func offerOnPeripheral(_ site: PeripheralSite) async -> PeripheralOffer {
        let listener: L2CAPListener
        do throws(L2CAPError) {
            guard let address = await BlueZAdapter.address(site.bus, adapterPath: site.adapterPath) else {
                throw .addressUnknown(.adapter)
            }
            listener = try L2CAPListener(adapter: address, receiveMTU: GattPeripheral.l2capReceiveMTU)
        } catch {
            return PeripheralOffer(unavailable: error)
        }
        let adapterPath = site.adapterPath
        return PeripheralOffer(psm: listener.psm, accept: {
            guard let channel = try? await listener.accept() else { return nil }
            return PeerConnection(transport: channel, device: BlueZ.devicePath(adapterPath: adapterPath, address: channel.peer))
        }, close: { listener.close() })
    }
}

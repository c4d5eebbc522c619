import DBus

/// The GATT row of `TransportChoice.table`: the transfer characteristic, through bluetoothd. The
/// sender writes through its acquired write socket and hears notifications on an acquired notify
/// socket or, failing that, by D-Bus (`StartNotify`); the receiver serves the characteristic in
/// its GATT application (`TransferCharacteristicServer`), so there is nothing more to start there.
enum GattTransport {
    static func openOnCentral(_ central: CentralLink) async throws(BlueZError) -> Result<OpenedTransport, BlueZError>? {
        let bus = central.bus, charPath = central.transferCharacteristic
        let iface = BlueZ.gattCharacteristic
        let link = GattLink(device: central.device, mtu: 23, sendsNotifications: false)
        var tasks: [Task<Void, Never>] = []
        do throws(BlueZError) {
            // Disconnect watch, before anything can go wrong on the link.
            tasks.append(try await GattCentral.closeOnDisconnect(link, bus: bus, device: central.device))

            // Writes: the acquired socket only, taken first (the receiver hears of nothing until the
            // first write). bluetoothd 5.66 refuses AcquireWrite only when another client holds the
            // socket (or the link is gone), and then refuses WriteValue too ("Write acquired").
            let writeReply: [DBusValue]
            do {
                writeReply = try await bus.bluez(charPath, iface, "AcquireWrite", [.properties([:])])
            } catch {
                throw BlueZError.acquireRefused(error)
            }
            guard let writeFD = writeReply.first?.unixFD else {
                throw BlueZError.dbus(.malformedMessage(.init(.unexpectedReply, "AcquireWrite reply without a file descriptor")))
            }
            link.attachOutbound(fd: writeFD, mtu: writeReply.dropFirst().first?.uint16.map(Int.init) ?? link.mtu)

            // Notifications: acquired socket, or StartNotify + PropertiesChanged(Value). StartNotify
            // still works when another client subscribed with StartNotify (AcquireNotify then fails
            // with InProgress); both fail with NotPermitted when another client acquired the socket.
            var usedStartNotify = false
            if let reply = try? await bus.bluez(charPath, iface, "AcquireNotify", [.properties([:])]),
               let fd = reply.first?.unixFD {
                if let mtu = reply.dropFirst().first?.uint16 { link.updateMTU(Int(mtu)) }
                link.attachInbound(fd: fd)
            } else {
                tasks.append(try await subscribeToValues(link, bus: bus, characteristic: charPath))
                usedStartNotify = true
            }

            let cleanup = tasks
            let stopNotify = usedStartNotify
            link.onClose {
                for t in cleanup { t.cancel() }
                if stopNotify { _ = try? await bus.bluez(charPath, iface, "StopNotify", timeout: .seconds(5)) }
                await central.release()
            }
            return .success(OpenedTransport(transport: link))
        } catch {
            for t in tasks { t.cancel() }
            await link.close()
            throw error
        }
    }

    /// Hands the characteristic's `Value` notifications to `link` (`StartNotify`); the task ends
    /// with the subscription.
    private static func subscribeToValues(
        _ link: GattLink, bus: DBusConnection, characteristic: String
    ) async throws(BlueZError) -> Task<Void, Never> {
        let values = try await GattCentral.mapped { () async throws(DBusError) in
            try await bus.propertiesChanged(sender: BlueZ.service, path: characteristic, interface: BlueZ.gattCharacteristic)
        }
        let task = Task {
            for await change in values {
                if let v = change.changed["Value"]?.bytes { link.deliver(v) }
            }
        }
        do {
            _ = try await bus.bluez(characteristic, BlueZ.gattCharacteristic, "StartNotify")
        } catch {
            task.cancel()
            throw BlueZError.acquireRefused(error)
        }
        return task
    }

    /// Nothing to start: the GATT application serves the transfer characteristic.
    static func offerOnPeripheral(_ site: PeripheralSite) async -> PeripheralOffer {
        PeripheralOffer()
    }
}

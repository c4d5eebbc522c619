import DBus
import Pipeline

/// The LE link to a receiver: waiting for earlier links to go and for the new one's services, and
/// what transports opened on it share (the disconnect watch, the service's characteristics).
extension GattCentral {
    /// Closes `transport` once bluetoothd reports `device` disconnected (the task ends then; cancel
    /// it when the transport is closed otherwise).
    static func closeOnDisconnect(
        _ transport: any DatagramTransport, bus: DBusConnection, device: String
    ) async throws(BlueZError) -> Task<Void, Never> {
        let changes = try await mapped { () async throws(DBusError) in
            try await bus.propertiesChanged(sender: BlueZ.service, path: device, interface: BlueZ.device)
        }
        return Task {
            for await change in changes where change.changed["Connected"]?.bool == false {
                await transport.close()
                return
            }
        }
    }

    /// A link to `device` that is still up when we are about to connect is usually the previous
    /// sender's, torn down by bluetoothd a moment later (it ends a link 2 s after `Disconnect`):
    /// connecting onto it would lose the new connection halfway (and then meet bluetoothd 5.66's
    /// stuck `AcquireWrite`). Wait for it to go, up to `earlierLinkPatience`; a link that stays (another
    /// program's) is used as it is.
    static func waitForEarlierDisconnect(_ bus: DBusConnection, device: String) async {
        _ = await boundedPoll(patience: earlierLinkPatience, every: .milliseconds(50)) { () async -> Bool? in
            let connected = try? await bus.property(destination: BlueZ.service, path: device, interface: BlueZ.device, name: "Connected")
            return connected?.bool == true ? nil : true
        }
    }

    static let earlierLinkPatience: Duration = .seconds(3)

    /// Waits until bluetoothd has resolved the services on the new link to `device`, up to
    /// `servicesPatience`. A link that drops meanwhile ends the wait at once (`linkLost`), so the
    /// sender connects again instead of waiting out the time limit.
    static func waitForServices(_ bus: DBusConnection, device: String) async throws(BlueZError) {
        let resolved = try await boundedPoll(patience: servicesPatience, every: .milliseconds(50)) { () async throws(BlueZError) -> Bool? in
            let props = try? await bus.allProperties(destination: BlueZ.service, path: device, interface: BlueZ.device)
            if props?["ServicesResolved"]?.bool == true { return true }
            if props?["Connected"]?.bool == false { throw BlueZError.linkLost }
            return nil
        }
        if resolved == nil { throw BlueZError.timeout(.servicesResolved) }
    }

    static let servicesPatience: Duration = .seconds(30)

    /// Waits, up to `refusedLinkPatience`, until this adapter has no link to another blesend
    /// receiver than `device`: not to the receivers that refused us (`refused`, whose links we asked
    /// bluetoothd to end; asked once more if one stays), nor to one an earlier blesend run has just
    /// left (bluetoothd ends a link about 2 s after `Disconnect`, and the next run starts at once).
    /// Links to other devices (a keyboard) are not waited for.
    ///
    /// One link at a time: in the lab (btvirt, kernel 6.1) a second LE link made while the first
    /// receiver's was still up broke both: the new one never finished service discovery (or showed
    /// no transfer characteristic), btvirt answered the peripheral's Disconnect with "unknown
    /// connection identifier", and the next L2CAP channel to the first receiver was refused
    /// (ECONNREFUSED). lab/README.md, "One LE link at a time".
    static func waitForLinksToEnd(_ bus: DBusConnection, adapterPath: String, refused: Set<String>, before device: String) async {
        let askAgainAt = ContinuousClock.now + refusedLinkPatience / 2
        var askedAgain = false
        _ = await boundedPoll(patience: refusedLinkPatience, every: .milliseconds(50)) { () async -> Bool? in
            guard let objects = try? await bus.managedObjects(destination: BlueZ.service, path: "/") else { return true }
            let up = objects.compactMap { path, interfaces -> String? in
                guard path != device, let props = interfaces[BlueZ.device], props["Adapter"]?.objectPath == adapterPath,
                      props["Connected"]?.bool == true else { return nil }
                let uuids = (props["UUIDs"]?.strings ?? []).map { $0.lowercased() }
                return refused.contains(path) || uuids.contains(BlesendGATT.serviceUUID) ? path : nil
            }
            if up.isEmpty { return true }
            if !askedAgain, ContinuousClock.now >= askAgainAt {
                askedAgain = true
                for path in up where refused.contains(path) { await bus.requestDisconnect(path) }
            }
            return nil
        }
    }

    static let refusedLinkPatience: Duration = .seconds(4)

    /// The value of the characteristic `uuid` in the transfer characteristic's service; nil when the
    /// receiver has none or the read fails.
    static func readServiceValue(_ bus: DBusConnection, transferCharacteristic: String, uuid: String) async -> [UInt8]? {
        let service = String(transferCharacteristic[..<(transferCharacteristic.lastIndex(of: "/") ?? transferCharacteristic.endIndex)])
        guard let objects = try? await bus.managedObjects(destination: BlueZ.service, path: "/"),
              let path = objects.keys.sorted().first(where: { path in
                  path.hasPrefix(service + "/") && objects[path]?[BlueZ.gattCharacteristic]?["UUID"]?.string?.lowercased() == uuid
              }),
              let value = try? await bus.bluez(path, BlueZ.gattCharacteristic, "ReadValue", [.properties([:])], timeout: .seconds(5))
        else { return nil }
        return value.first?.bytes
    }

    static func transferCharacteristic(_ bus: DBusConnection, device: String, patience: Duration) async throws(BlueZError) -> String {
        let path = try await boundedPoll(patience: patience, every: .milliseconds(200)) { () async throws(BlueZError) -> String? in
            let objects = try await mapped { () async throws(DBusError) in try await bus.managedObjects(destination: BlueZ.service, path: "/") }
            return objects.keys.sorted().first { path in
                path.hasPrefix(device + "/")
                    && objects[path]?[BlueZ.gattCharacteristic]?["UUID"]?.string?.lowercased() == BlesendGATT.transferCharacteristicUUID
            }
        }
        guard let path else { throw BlueZError.characteristicMissing }
        return path
    }

    static func mapped<T>(_ body: () async throws(DBusError) -> T) async throws(BlueZError) -> T {
        do { return try await body() } catch { throw BlueZError.from(error) }
    }
}

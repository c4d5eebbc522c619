import DBus
import L2CAP
import Pipeline
import Synchronization

/// The sender side: finds a receiver advertising the transfer service, connects, and returns the
/// connection: an L2CAP channel where the receiver publishes a PSM and `transport` allows it, else
/// the GATT link. Discovery is stopped, and the device disconnected, on every exit path.
public enum GattCentral {
    /// How long an L2CAP channel may take to open before `auto` falls back to GATT.
    public static let l2capTimeout: Duration = .seconds(3)

    /// Scans on `radio.adapter` for up to `scanTime` (default `radio.scanTimeout`), connects to the
    /// first receiver found (skipping ones whose RSSI is known and below `radio.minimumRSSI`; an
    /// absent RSSI is treated as unknown and accepted) and opens the transport `radio.transport` asks for.
    /// `excluding` lists device paths not to connect to again (receivers that failed the handshake);
    /// their links must be gone before another device is connected (`waitForLinksToEnd`). `known`
    /// lists receivers seen advertising earlier in this run: their objects are kept for this scan.
    /// `recognises` judges private-discovery data (docs/protocol.md §1.1): a receiver that lists
    /// this sender is tried first, one that does not is never tried, and if only such receivers
    /// are seen for `notListedPatience` the scan ends with `notListed`.
    public static func connect(
        _ radio: RadioOptions, scanTime: Duration? = nil, excluding: Set<String> = [], known: Set<String> = [], bus: DBusConnection? = nil,
        recognises: (@Sendable ([UInt8]) -> Bool?)? = nil, progress: @escaping @Sendable (ConnectStep) -> Void = { _ in }
    ) async throws(BlueZError) -> PeerConnection {
        let connection: DBusConnection
        if let bus { connection = bus } else { connection = try await BlueZAdapter.systemBus() }
        let ownsBus = bus == nil
        do throws(BlueZError) {
            let adapterPath = try await BlueZAdapter.resolve(connection, name: radio.adapter)
            let deadline = ContinuousClock.now + (scanTime ?? radio.scanTimeout)
            var attempts = 0
            while true {
                let (device, others) = try await discover(
                    connection, adapterPath: adapterPath, timeout: max(.seconds(1), deadline - .now), minimumRSSI: radio.minimumRSSI,
                    excluding: excluding, known: known, recognises: recognises)
                progress(.found(device: device))
                await waitForLinksToEnd(connection, adapterPath: adapterPath, refused: excluding, before: device)
                if let failure = try await requestLink(connection, device: device) {
                    attempts += 1
                    guard attempts <= maxConnectAttemptRetries, ContinuousClock.now < deadline else { throw failure.error }
                    progress(.connectAttemptFailed(failure))
                    continue
                }
                return try await open(connection, adapterPath: adapterPath, device: device, transport: radio.transport,
                                      otherReceivers: others, ownsBus: ownsBus, progress: progress)
            }
        } catch {
            if ownsBus { await connection.close() }
            throw error
        }
    }

    /// What a scan makes of one device.
    enum Sighting: Equatable {
        /// A receiver whose private-discovery data lists this sender: connect first.
        case listsUs
        /// A receiver that advertises the service without discovery data (an older one, or one
        /// without private discovery): it may be the pinned one; only the handshake tells.
        case plain
        /// A receiver whose discovery data does not list this sender.
        case otherReceiver
        case none
    }

    /// `recognises` judges private-discovery service data: whether it lists this sender, nil if it
    /// cannot read it (nil function: this sender does not look at it).
    static func sighting(_ props: [String: DBusValue], adapterPath: String, minimumRSSI: Int16?,
                         recognises: (@Sendable ([UInt8]) -> Bool?)?) -> Sighting {
        guard props["Adapter"]?.objectPath == adapterPath else { return .none }
        if let minimumRSSI, let rssi = props["RSSI"]?.int16, rssi < minimumRSSI { return .none }
        // Data it cannot read is ignored (a later layout): the device counts as a plain receiver.
        if let recognises, let data = BlesendGATT.discoveryData(props) {
            guard let listed = recognises(data) else { return .plain }
            return listed ? .listsUs : .otherReceiver
        }
        let uuids = (props["UUIDs"]?.strings ?? []).map { $0.lowercased() }
        return uuids.contains(BlesendGATT.serviceUUID) ? .plain : .none
    }

    /// How long a scan that has reported nothing goes on before it is restarted (see `discover`).
    static let scanRestart: Duration = .milliseconds(600)

    /// How long a sender that sees only receivers not listing it keeps looking before it says so.
    public static let notListedPatience: Duration = .seconds(2)

    /// Set once, read from several tasks.
    private final class Flag: Sendable {
        private let state = Mutex(false)
        func set() { state.withLock { $0 = true } }
        var isSet: Bool { state.withLock { $0 } }
    }

    private enum ScanOutcome: Sendable {
        case device(String)
        case onlyOthers
        case timeout
    }

    /// Receivers seen in one scan, from several tasks.
    private final class Seen: Sendable {
        private let paths = Mutex<Set<String>>([])
        func insert(_ path: String) { paths.withLock { _ = $0.insert(path) } }
        func all(but device: String) -> Set<String> { paths.withLock { $0.subtracting([device]) } }
    }

    /// The first receiver to connect to, and the other receivers the scan saw meanwhile.
    private static func discover(
        _ bus: DBusConnection, adapterPath: String, timeout: Duration, minimumRSSI: Int16?, excluding: Set<String>,
        known: Set<String>, recognises: (@Sendable ([UInt8]) -> Bool?)?
    ) async throws(BlueZError) -> (device: String, others: Set<String>) {
        let added: AsyncStream<DBusObjectManagerEvent>
        let changed: AsyncStream<DBusPropertiesChanged>
        do {
            added = try await bus.objectManagerEvents(sender: BlueZ.service, path: "/")
            changed = try await bus.propertiesChanged(sender: BlueZ.service, pathNamespace: adapterPath, interface: BlueZ.device)
        } catch {
            throw BlueZError.from(error)
        }
        await forgetStaleDevices(bus, adapterPath: adapterPath, keeping: known)
        // A receiver with private discovery advertises its data instead of the UUID list, and
        // bluetoothd's UUID filter matches lists only: with a recogniser, look at every LE device.
        var filter: [String: DBusValue] = ["Transport": .string("le")]
        if recognises == nil { filter["UUIDs"] = .strings([BlesendGATT.serviceUUID]) }
        let scanFilter = filter   // for the restarts (bluetoothd forgets a client's filter when it stops)
        _ = try await bus.bluez(adapterPath, BlueZ.adapter, "SetDiscoveryFilter", [.properties(filter)])
        _ = try await bus.bluez(adapterPath, BlueZ.adapter, "StartDiscovery")
        let othersSeen = Flag()
        let seen = Seen()
        let judge: @Sendable (String, [String: DBusValue]) -> Bool = { path, props in
            guard !excluding.contains(path) else { return false }
            switch sighting(props, adapterPath: adapterPath, minimumRSSI: minimumRSSI, recognises: recognises) {
            case .listsUs, .plain:
                seen.insert(path)
                return true
            case .otherReceiver: othersSeen.set()
            case .none: break
            }
            return false
        }
        do {
            // Devices bluetoothd already knows (seen in this scan, or cached); one that lists us first.
            let objects = try await bus.managedObjects(destination: BlueZ.service, path: "/")
            let cached = objects.keys.sorted().compactMap { path -> (String, Sighting)? in
                guard let props = objects[path]?[BlueZ.device], !excluding.contains(path) else { return nil }
                return (path, sighting(props, adapterPath: adapterPath, minimumRSSI: minimumRSSI, recognises: recognises))
            }
            if cached.contains(where: { $0.1 == .otherReceiver }) { othersSeen.set() }
            for (path, sighting) in cached where sighting == .listsUs || sighting == .plain { seen.insert(path) }
            var outcome: ScanOutcome = .timeout
            if let path = (cached.first { $0.1 == .listsUs } ?? cached.first { $0.1 == .plain })?.0 {
                outcome = .device(path)
            } else {
                outcome = await withTaskGroup(of: ScanOutcome?.self) { group -> ScanOutcome in
                    group.addTask {
                        for await event in added {
                            if case .added(let path, let ifaces) = event, let props = ifaces[BlueZ.device], judge(path, props) {
                                return .device(path)
                            }
                        }
                        return nil
                    }
                    group.addTask {
                        for await change in changed
                            where change.changed["UUIDs"] != nil || change.changed["RSSI"] != nil || change.changed["ServiceData"] != nil {
                            if let props = try? await bus.allProperties(destination: BlueZ.service, path: change.path, interface: BlueZ.device),
                               judge(change.path, props) { return .device(change.path) }
                        }
                        return nil
                    }
                    group.addTask {
                        // Only receivers that do not list this sender, for `notListedPatience`: say so
                        // rather than connect to each (private discovery).
                        while !Task.isCancelled {
                            if othersSeen.isSet {
                                try? await Task.sleep(for: notListedPatience)
                                return Task.isCancelled ? nil : .onlyOthers
                            }
                            try? await Task.sleep(for: .milliseconds(200))
                        }
                        return nil
                    }
                    group.addTask {
                        // bluetoothd 5.82 can drop the reports that arrive before its Start Service
                        // Discovery completes (btvirt reports at once), and with the controller's
                        // duplicate filter on those devices are not reported again until the scan
                        // restarts, 10.24 s later (lab/README.md, "A scan often takes about 11 s").
                        // Restart it ourselves meanwhile.
                        while !Task.isCancelled {
                            try? await Task.sleep(for: scanRestart)
                            if Task.isCancelled { break }
                            _ = try? await bus.bluez(adapterPath, BlueZ.adapter, "StopDiscovery", timeout: .seconds(5))
                            if Task.isCancelled { break }
                            _ = try? await bus.bluez(adapterPath, BlueZ.adapter, "SetDiscoveryFilter", [.properties(scanFilter)], timeout: .seconds(5))
                            _ = try? await bus.bluez(adapterPath, BlueZ.adapter, "StartDiscovery", timeout: .seconds(5))
                        }
                        return nil
                    }
                    group.addTask {
                        // A receiver that restarted while we were still connected to it left an object
                        // that was connected (so kept) at the start of the scan and carries stale UUIDs
                        // now: forget stale objects again every few seconds.
                        while !Task.isCancelled {
                            try? await Task.sleep(for: .seconds(5))
                            if Task.isCancelled { break }
                            await forgetStaleDevices(bus, adapterPath: adapterPath, keeping: known)
                        }
                        return nil
                    }
                    group.addTask {
                        try? await Task.sleep(for: timeout)
                        return .timeout
                    }
                    var result = ScanOutcome.timeout
                    while let next = await group.next() {
                        if let next {
                            result = next
                            break
                        }
                    }
                    group.cancelAll()
                    return result
                }
            }
            _ = try? await bus.bluez(adapterPath, BlueZ.adapter, "StopDiscovery", timeout: .seconds(5))
            switch outcome {
            case .device(let path): return (path, seen.all(but: path))
            case .onlyOthers: throw BlueZError.notListed
            case .timeout: throw BlueZError.notFound
            }
        } catch let e as BlueZError {
            _ = try? await bus.bluez(adapterPath, BlueZ.adapter, "StopDiscovery", timeout: .seconds(5))
            throw e
        } catch {
            _ = try? await bus.bluez(adapterPath, BlueZ.adapter, "StopDiscovery", timeout: .seconds(5))
            throw BlueZError.from(error as? DBusError ?? .cancelled)
        }
    }

    /// bluetoothd keeps a disconnected, unpaired peer's object with the UUIDs from its last GATT
    /// discovery and ignores the service UUIDs of later advertisements. A receiver that restarted
    /// (its service unregistered while we were connected) therefore never matches again. Such
    /// objects hold nothing worth keeping (no bond), so drop them before scanning; bluetoothd
    /// recreates them from the next advertisement.
    /// Receivers seen advertising earlier in the same run (`keeping`) are left: trying one of them
    /// next needs no new sighting (a scan on bluetoothd 5.82 sometimes reports nothing for 10 s).
    static func forgetStaleDevices(_ bus: DBusConnection, adapterPath: String, keeping: Set<String> = []) async {
        guard let objects = try? await bus.managedObjects(destination: BlueZ.service, path: "/") else { return }
        for (path, ifaces) in objects where !keeping.contains(path) {
            guard let props = ifaces[BlueZ.device], props["Adapter"]?.objectPath == adapterPath,
                  props["Connected"]?.bool != true, props["Paired"]?.bool != true, props["Trusted"]?.bool != true
            else { continue }
            _ = try? await bus.bluez(adapterPath, BlueZ.adapter, "RemoveDevice", [.objectPath(path)], timeout: .seconds(5))
        }
    }

    /// Asks bluetoothd for an LE link to `device` (after the previous sender's link to it is
    /// gone). A failure another scan can mend is returned, after cancelling bluetoothd's attempt;
    /// any other is thrown.
    private static func requestLink(_ bus: DBusConnection, device: String) async throws(BlueZError) -> ConnectAttemptFailure? {
        await waitForEarlierDisconnect(bus, device: device)
        do {
            _ = try await bus.bluez(device, BlueZ.device, "Connect", timeout: connectPatience)
            return nil
        } catch {
            _ = try? await bus.bluez(device, BlueZ.device, "Disconnect", timeout: .seconds(10))
            guard let failure = ConnectAttemptFailure(error) else { throw error }
            return failure
        }
    }

    /// Opens the transport on the LE link `requestLink` made.
    private static func open(
        _ bus: DBusConnection, adapterPath: String, device: String, transport: TransportChoice, otherReceivers: Set<String>,
        ownsBus: Bool, progress: @escaping @Sendable (ConnectStep) -> Void
    ) async throws(BlueZError) -> PeerConnection {
        var tasks: [Task<Void, Never>] = []
        let link = GattLink(device: device, mtu: 23, sendsNotifications: false)
        do {
            try await waitForServices(bus, device: device)
            // On a link that was just re-established (the receiver's adapter or bluetoothd came back),
            // ServicesResolved can be true while the characteristics are still being exported: give
            // them a moment before concluding the peer has none.
            let charPath = try await transferCharacteristic(bus, device: device, patience: .seconds(5))
            progress(.servicesResolved)
            let extensions = BlesendGATT.extensions(
                fromValue: await readServiceValue(bus, transferCharacteristic: charPath, uuid: BlesendGATT.extensionsCharacteristicUUID))
            let iface = BlueZ.gattCharacteristic
            var fallback: L2CAPError?
            if transport != .gatt {
                var channel: L2CAPChannel?
                do {
                    channel = try await openChannel(bus, adapterPath: adapterPath, device: device, transferCharacteristic: charPath)
                } catch {
                    if transport == .l2cap { throw BlueZError.l2cap(error) }
                    fallback = error
                }
                if let channel {
                    // The kernel closes the channel's socket when the link drops; bluetoothd's word
                    // that the device disconnected ends it too, as for a GATT link.
                    let watch: Task<Void, Never>
                    do {
                        watch = try await closeOnDisconnect(channel, bus: bus, device: device)
                    } catch {
                        await channel.close()
                        throw error
                    }
                    return PeerConnection(transport: channel, device: device, receiverExtensions: extensions, otherReceivers: otherReceivers) {
                        watch.cancel()
                        await bus.requestDisconnect(device)
                        if ownsBus { await bus.close() }
                    }
                }
                if transport == .l2cap { throw BlueZError.l2capNotOffered }
            }

            // Disconnect watch, before anything can go wrong on the link.
            tasks.append(try await closeOnDisconnect(link, bus: bus, device: device))

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
                throw BlueZError.dbus(.malformedMessage("AcquireWrite reply without a file descriptor"))
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
                let values = try await mapped { () async throws(DBusError) in try await bus.propertiesChanged(sender: BlueZ.service, path: charPath, interface: iface) }
                tasks.append(Task {
                    for await change in values {
                        if let v = change.changed["Value"]?.bytes { link.deliver(v) }
                    }
                })
                do {
                    _ = try await bus.bluez(charPath, iface, "StartNotify")
                } catch {
                    throw BlueZError.acquireRefused(error)
                }
                usedStartNotify = true
            }

            let cleanup = tasks
            let stopNotify = usedStartNotify
            link.onClose {
                for t in cleanup { t.cancel() }
                if stopNotify { _ = try? await bus.bluez(charPath, iface, "StopNotify", timeout: .seconds(5)) }
                await bus.requestDisconnect(device)
                if ownsBus { await bus.close() }
            }
            return PeerConnection(transport: link, device: device, l2capFallback: fallback, receiverExtensions: extensions,
                                  otherReceivers: otherReceivers)
        } catch {
            for t in tasks { t.cancel() }
            await link.close()
            let failure = (error as? BlueZError) ?? BlueZError.linkLost
            // A busy characteristic means another program on this machine uses this very link: leave it up.
            if case .characteristicBusy = failure { throw failure }
            _ = try? await bus.bluez(device, BlueZ.device, "Disconnect", timeout: .seconds(10))
            throw failure
        }
    }

    /// Closes `transport` once bluetoothd reports `device` disconnected (the task ends then; cancel
    /// it when the transport is closed otherwise).
    private static func closeOnDisconnect(
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
    private static func waitForEarlierDisconnect(_ bus: DBusConnection, device: String) async {
        _ = await boundedPoll(patience: earlierLinkPatience, every: .milliseconds(50)) { () async -> Bool? in
            let connected = try? await bus.property(destination: BlueZ.service, path: device, interface: BlueZ.device, name: "Connected")
            return connected?.bool == true ? nil : true
        }
    }

    static let earlierLinkPatience: Duration = .seconds(3)

    /// Waits until bluetoothd has resolved the services on the new link to `device`, up to
    /// `servicesPatience`. A link that drops meanwhile ends the wait at once (`linkLost`), so the
    /// sender connects again instead of waiting out the time limit.
    private static func waitForServices(_ bus: DBusConnection, device: String) async throws(BlueZError) {
        let resolved = try await boundedPoll(patience: servicesPatience, every: .milliseconds(50)) { () async throws(BlueZError) -> Bool? in
            let props = try? await bus.allProperties(destination: BlueZ.service, path: device, interface: BlueZ.device)
            if props?["ServicesResolved"]?.bool == true { return true }
            if props?["Connected"]?.bool == false { throw BlueZError.linkLost }
            return nil
        }
        if resolved == nil { throw BlueZError.timeout("ServicesResolved") }
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

    /// How long `Device1.Connect` may take. A receiver seen advertising a moment ago answers a
    /// connection request at its next connectable advertisement, well within a second on a usable
    /// link; bluetoothd itself waits far longer (it returns when the kernel gives up).
    static let connectPatience: Duration = .seconds(15)

    /// How many times a failed `Device1.Connect` (`ConnectAttemptFailure`) is followed by a new
    /// scan and another attempt, within the scan's time.
    static let maxConnectAttemptRetries = 2

    /// Opens the L2CAP channel the receiver publishes in the transfer service's PSM characteristic,
    /// on the LE link already up; nil when it publishes none.
    private static func openChannel(
        _ bus: DBusConnection, adapterPath: String, device: String, transferCharacteristic: String
    ) async throws(L2CAPError) -> L2CAPChannel? {
        guard let value = await readServiceValue(bus, transferCharacteristic: transferCharacteristic, uuid: BlesendGATT.psmCharacteristicUUID),
              let psm = BlesendGATT.psm(fromValue: value),
              let objects = try? await bus.managedObjects(destination: BlueZ.service, path: "/")
        else { return nil }
        guard let props = objects[device]?[BlueZ.device], let text = props["Address"]?.string,
              let peer = BluetoothAddress(text, bluezType: props["AddressType"]?.string ?? "public"),
              let local = await BlueZAdapter.address(bus, adapterPath: adapterPath)
        else { throw .connectFailed(errno: 0) }
        return try await L2CAPConnector.connect(from: local, to: peer, psm: psm, receiveMTU: GattPeripheral.l2capReceiveMTU, timeout: l2capTimeout)
    }

    /// The value of the characteristic `uuid` in the transfer characteristic's service; nil when the
    /// receiver has none or the read fails.
    private static func readServiceValue(_ bus: DBusConnection, transferCharacteristic: String, uuid: String) async -> [UInt8]? {
        let service = String(transferCharacteristic[..<(transferCharacteristic.lastIndex(of: "/") ?? transferCharacteristic.endIndex)])
        guard let objects = try? await bus.managedObjects(destination: BlueZ.service, path: "/"),
              let path = objects.keys.sorted().first(where: { path in
                  path.hasPrefix(service + "/") && objects[path]?[BlueZ.gattCharacteristic]?["UUID"]?.string?.lowercased() == uuid
              }),
              let value = try? await bus.bluez(path, BlueZ.gattCharacteristic, "ReadValue", [.properties([:])], timeout: .seconds(5))
        else { return nil }
        return value.first?.bytes
    }

    private static func transferCharacteristic(_ bus: DBusConnection, device: String, patience: Duration) async throws(BlueZError) -> String {
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

    private static func mapped<T>(_ body: () async throws(DBusError) -> T) async throws(BlueZError) -> T {
        do { return try await body() } catch { throw BlueZError.from(error) }
    }
}

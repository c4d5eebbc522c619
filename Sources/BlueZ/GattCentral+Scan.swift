import DBus
import Synchronization

/// Finding a receiver: a scan by bluetoothd, judged by `sighting`.
extension GattCentral {
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
    /// cannot read it (nil function: this sender does not look at it). `onlyListed`: only a
    /// receiver whose data it recognises counts (a pairing sender: `blesend pair`); every other
    /// device is nothing to it.
    static func sighting(_ props: [String: DBusValue], adapterPath: String, minimumRSSI: Int16?,
                         recognises: (@Sendable ([UInt8]) -> Bool?)?, onlyListed: Bool = false) -> Sighting {
        guard props["Adapter"]?.objectPath == adapterPath else { return .none }
        if let minimumRSSI, let rssi = props["RSSI"]?.int16, rssi < minimumRSSI { return .none }
        if onlyListed {
            guard let recognises, let data = BlesendGATT.discoveryData(props), recognises(data) == true else { return .none }
            return .listsUs
        }
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
    static func discover(
        _ bus: DBusConnection, adapterPath: String, timeout: Duration, minimumRSSI: Int16?, excluding: Set<String>,
        known: Set<String>, recognises: (@Sendable ([UInt8]) -> Bool?)?, onlyListed: Bool = false
    ) async throws(BlueZError) -> (device: String, others: Set<String>) {
        let (added, changed) = try await deviceSignals(bus, adapterPath: adapterPath)
        await forgetStaleDevices(bus, adapterPath: adapterPath, keeping: known)
        // A receiver with private discovery advertises its data instead of the UUID list, and
        // bluetoothd's UUID filter matches lists only: with a recogniser, look at every LE device.
        var filter: [String: DBusValue] = ["Transport": .string("le")]
        if recognises == nil { filter["UUIDs"] = .strings([BlesendGATT.serviceUUID]) }
        let scanFilter = filter   // for the restarts (bluetoothd forgets a client's filter when it stops)
        try await startDiscovery(bus, adapterPath: adapterPath, filter: filter)
        let othersSeen = Flag()
        let seen = Seen()
        let judge: @Sendable (String, [String: DBusValue]) -> Bool = { path, props in
            guard !excluding.contains(path) else { return false }
            switch sighting(props, adapterPath: adapterPath, minimumRSSI: minimumRSSI, recognises: recognises, onlyListed: onlyListed) {
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
                return (path, sighting(props, adapterPath: adapterPath, minimumRSSI: minimumRSSI, recognises: recognises, onlyListed: onlyListed))
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
                        await keepRestartingDiscovery(bus, adapterPath: adapterPath, filter: scanFilter)
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

    /// Sets `filter` and starts discovery on the adapter (bluetoothd forgets a client's filter when
    /// the client stops discovering, so every start sets it again).
    static func startDiscovery(_ bus: DBusConnection, adapterPath: String, filter: [String: DBusValue]) async throws(BlueZError) {
        _ = try await bus.bluez(adapterPath, BlueZ.adapter, "SetDiscoveryFilter", [.properties(filter)])
        _ = try await bus.bluez(adapterPath, BlueZ.adapter, "StartDiscovery")
    }

    /// Restarts discovery every `scanRestart`, with `filter`, until the task is cancelled.
    ///
    /// bluetoothd 5.82 can drop the reports that arrive before its Start Service Discovery
    /// completes (btvirt reports at once), and with the controller's duplicate filter on those
    /// devices are not reported again until the scan restarts, 10.24 s later (lab/README.md, "A
    /// scan often takes about 11 s"). Restart it ourselves meanwhile.
    static func keepRestartingDiscovery(_ bus: DBusConnection, adapterPath: String, filter: [String: DBusValue]) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: scanRestart)
            if Task.isCancelled { break }
            _ = try? await bus.bluez(adapterPath, BlueZ.adapter, "StopDiscovery", timeout: .seconds(5))
            if Task.isCancelled { break }
            _ = try? await bus.bluez(adapterPath, BlueZ.adapter, "SetDiscoveryFilter", [.properties(filter)], timeout: .seconds(5))
            _ = try? await bus.bluez(adapterPath, BlueZ.adapter, "StartDiscovery", timeout: .seconds(5))
        }
    }

    /// What a scan watches: devices bluetoothd adds, and the properties of the adapter's devices
    /// as they change.
    static func deviceSignals(_ bus: DBusConnection, adapterPath: String) async throws(BlueZError)
        -> (added: AsyncStream<DBusObjectManagerEvent>, changed: AsyncStream<DBusPropertiesChanged>) {
        do {
            return (try await bus.objectManagerEvents(sender: BlueZ.service, path: "/"),
                    try await bus.propertiesChanged(sender: BlueZ.service, pathNamespace: adapterPath, interface: BlueZ.device))
        } catch {
            throw BlueZError.from(error)
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
}

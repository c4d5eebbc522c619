import DBus
import Pipeline

/// When a private-discovery receiver registers its advertisement afresh (a new salt, and on
/// extended-advertising controllers a new instance with a new resolvable private address), as a
/// pure decision over what is connected and a clock. `GattPeripheral` asks it and does what it says.
///
/// The rules (docs/threat-model.md, "Advertising"):
/// - A salt must never be on the air under two addresses. The kernel gives an instance one
///   resolvable private address and makes a new one only once it is `addressTimeout` old
///   (`HCI_DEFAULT_RPA_TIMEOUT`, 15 minutes), so the instance, and the salt in it, is replaced
///   every `period`, and `period + pendingGrace` stays under `addressTimeout` (`init` refuses
///   anything else): the address then never changes under one salt, whatever blocks a turn.
/// - Not while one of our own senders is connected: registering afresh under a live link leaves
///   the kernel re-enabling a stale instance when the link ends (`GattPeripheral.deviceDisconnected`).
///   While such a link is up the kernel does not advertise that instance anyway.
/// - Only our own links count. A device is ours when it holds a link on our service (a GATT link
///   or an L2CAP channel), or when it connected less than `pendingGrace` ago and is not paired: a
///   sender between its LE connection and its first write looks like that. A paired device (a
///   keyboard, headphones) or one connected for longer without touching our service is not a
///   sender of ours and blocks nothing; before, any connected device postponed the new salt for as
///   long as it stayed connected.
/// - A blocked turn is tried again every `retry`, not a whole `period` later, so the salt changes
///   soon after our link ends.
public struct AdvertisementRotation: Sendable {
    /// A device bluetoothd lists as connected on our adapter.
    public struct ConnectedDevice: Sendable, Equatable {
        public var path: String
        /// It holds a link on our service (a GATT link or an L2CAP channel we accepted).
        public var linkedToUs: Bool
        /// bluetoothd says it is paired (or bonded) with this machine.
        public var paired: Bool

        public init(path: String, linkedToUs: Bool, paired: Bool) {
            self.path = path
            self.linkedToUs = linkedToUs
            self.paired = paired
        }
    }

    public enum Decision: Sendable, Equatable {
        /// Register the advertisement afresh now, then call `registered(at:)`.
        case registerAgain
        /// Ask again at this instant.
        case wait(until: Instant)
    }

    /// The kernel's resolvable-private-address lifetime (`HCI_DEFAULT_RPA_TIMEOUT`, 900 s; only
    /// debugfs changes it).
    public static let kernelAddressTimeout: Duration = .seconds(900)
    public static let defaultPeriod: Duration = .seconds(600)
    public static let defaultPendingGrace: Duration = .seconds(30)
    public static let defaultRetry: Duration = .seconds(5)

    public let period: Duration
    public let pendingGrace: Duration
    public let retry: Duration
    /// When the advertisement now on the air was registered.
    public private(set) var lastRegistration: Instant
    /// When each connected device was first seen connected.
    private var firstSeen: [String: Instant] = [:]

    /// Nil when `period + pendingGrace` would reach `addressTimeout`, or a duration is not positive.
    public init?(
        registeredAt start: Instant, period: Duration = defaultPeriod, pendingGrace: Duration = defaultPendingGrace,
        retry: Duration = defaultRetry, addressTimeout: Duration = kernelAddressTimeout
    ) {
        guard period > .zero, retry > .zero, pendingGrace >= .zero, period + pendingGrace < addressTimeout else { return nil }
        self.period = period
        self.pendingGrace = pendingGrace
        self.retry = retry
        lastRegistration = start
    }

    /// The turn is due at this instant (the next `period` after the last registration).
    public var due: Instant { lastRegistration.advanced(by: period) }

    /// What to do at `now`, given the devices connected on our adapter (nil: bluetoothd could not
    /// say, which blocks the turn as a connected sender would).
    public mutating func decide(now: Instant, connected: [ConnectedDevice]?) -> Decision {
        if let connected {
            let paths = Set(connected.map(\.path))
            firstSeen = firstSeen.filter { paths.contains($0.key) }
            for device in connected where firstSeen[device.path] == nil { firstSeen[device.path] = now }
        }
        guard now >= due else { return .wait(until: due) }
        guard let connected, !connected.contains(where: { blocks($0, now: now) }) else {
            return .wait(until: now.advanced(by: retry))
        }
        return .registerAgain
    }

    /// The advertisement was registered afresh at `now` (by this policy, or because bluetoothd or
    /// the adapter came back).
    public mutating func registered(at now: Instant) {
        lastRegistration = now
    }

    /// Whether `device` is (or may be about to become) one of our senders.
    func blocks(_ device: ConnectedDevice, now: Instant) -> Bool {
        if device.linkedToUs { return true }
        if device.paired { return false }
        let since = firstSeen[device.path] ?? now
        return now.duration(since: since) < pendingGrace
    }

    /// The devices bluetoothd lists as connected under `adapterPath`, in path order; `ours` are
    /// the device paths that hold a link on our service.
    public static func connectedDevices(_ objects: DBusManagedObjects, adapterPath: String, ours: Set<String>) -> [ConnectedDevice] {
        objects.keys.sorted().compactMap { path in
            guard let device = objects[path]?[BlueZ.device], device["Adapter"]?.objectPath == adapterPath,
                  device["Connected"]?.bool == true else { return nil }
            let paired = device["Paired"]?.bool == true || device["Bonded"]?.bool == true
            return ConnectedDevice(path: path, linkedToUs: ours.contains(path), paired: paired)
        }
    }
}

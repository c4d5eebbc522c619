import Pipeline

/// Rule 7: how long each device must wait before its next channel is admitted, after failed or
/// silent handshakes.
///
/// The n-th failure in a row refuses the device's channels for `min(base · 2^(n-1), cap)` from the
/// failure: 2, 4, 8, 16, 32, 60, 60 … s by default. A successful authentication forgets the device.
/// At most `rememberedDevices` devices are kept; a failure from one more forgets the device whose
/// last failure is oldest (its next failure starts again at `base`).
public struct DeviceBackoff: Sendable {
    struct Entry: Sendable {
        /// Failures in a row (saturating: the delay stops growing at `cap` long before).
        var failures: Int
        var until: Instant
        var lastFailure: Instant
        /// Order of the last failure, oldest first; breaks ties between equal instants.
        var order: UInt64
    }

    public let configuration: BackoffConfiguration
    private var entries: [DeviceID: Entry] = [:]
    private var nextOrder: UInt64 = 0

    public init(configuration: BackoffConfiguration = .init()) {
        self.configuration = configuration
    }

    /// How many devices are remembered.
    public var count: Int { entries.count }

    /// The instant the device's backoff ends, if it is inside one at `now`.
    public func backoffEnd(for device: DeviceID, now: Instant) -> Instant? {
        guard let entry = entries[device], now < entry.until else { return nil }
        return entry.until
    }

    /// The failures in a row remembered for the device (0 if none).
    public func failures(of device: DeviceID) -> Int { entries[device]?.failures ?? 0 }

    /// A failed or silent handshake at `now`: the backoff grows, counted from `now`. Returns its end.
    @discardableResult
    public mutating func recordFailure(of device: DeviceID, now: Instant) -> Instant {
        let failures = min((entries[device]?.failures ?? 0) + 1, 64)
        let until = now.advanced(by: delay(afterFailures: failures))
        entries[device] = Entry(failures: failures, until: until, lastFailure: now, order: nextOrder)
        nextOrder &+= 1
        if entries.count > configuration.rememberedDevices { forgetOldest() }
        return until
    }

    /// A successful authentication: the device starts afresh.
    public mutating func forget(_ device: DeviceID) {
        entries[device] = nil
    }

    /// `min(base · 2^(failures-1), cap)`; zero for no failures.
    public func delay(afterFailures failures: Int) -> Duration {
        guard failures > 0 else { return .zero }
        var delay = configuration.base
        var doublings = failures - 1
        while doublings > 0 && delay < configuration.cap {
            delay = delay * 2
            doublings -= 1
        }
        return min(delay, configuration.cap)
    }

    private mutating func forgetOldest() {
        let oldest = entries.min { a, b in
            (a.value.lastFailure, a.value.order) < (b.value.lastFailure, b.value.order)
        }
        if let oldest { entries[oldest.key] = nil }
    }
}

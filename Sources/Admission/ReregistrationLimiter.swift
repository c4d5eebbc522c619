import Pipeline

/// Rule 10: registering the GATT application again is allowed at most once per `interval`. A
/// request inside the interval is answered with the instant it will be allowed; it is not
/// remembered (the driver asks again then), so it does not push the next allowed instant later.
public struct ReregistrationLimiter: Sendable {
    public let interval: Duration
    /// When a registration was last allowed.
    public private(set) var lastAllowed: Instant?

    public init(interval: Duration) {
        self.interval = interval
    }

    /// `.reregister` (and the interval starts again at `now`) or `.reregisterDeferred(allowedAt:)`.
    public mutating func request(now: Instant) -> AdmissionAction {
        if let lastAllowed {
            let allowedAt = lastAllowed.advanced(by: interval)
            if now < allowedAt { return .reregisterDeferred(allowedAt: allowedAt) }
        }
        lastAllowed = now
        return .reregister
    }
}

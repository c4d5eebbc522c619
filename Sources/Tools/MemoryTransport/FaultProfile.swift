/// What a `SimulatedLink` does to datagrams. Probabilities are per datagram, 0...1.
public struct FaultProfile: Sendable, Equatable {
    /// Dropped.
    public var loss: Double
    /// Delivered twice (each copy with its own delay).
    public var duplication: Double
    /// Held back by an extra random delay of up to `reorderDelay`, so later datagrams overtake it.
    public var reordering: Double
    /// One random bit flipped.
    public var corruption: Double
    /// Fixed one-way delay.
    public var latency: Duration
    /// Extra uniform random delay in 0...jitter. Jitter never reorders: datagrams that are not
    /// picked for `reordering` arrive in the order they were sent.
    public var jitter: Duration
    /// Largest extra delay of a reordered datagram.
    public var reorderDelay: Duration

    public init(loss: Double = 0, duplication: Double = 0, reordering: Double = 0, corruption: Double = 0,
                latency: Duration = .milliseconds(10), jitter: Duration = .zero,
                reorderDelay: Duration = .milliseconds(30)) {
        self.loss = loss
        self.duplication = duplication
        self.reordering = reordering
        self.corruption = corruption
        self.latency = latency
        self.jitter = jitter
        self.reorderDelay = reorderDelay
    }

    /// No faults, 10 ms one way.
    public static let clean = FaultProfile()

    /// No faults, no delay: every datagram arrives the moment it is sent (the wire vectors' link).
    public static let perfect = FaultProfile(latency: .zero)

    /// `percent` % loss, nothing else.
    public static func lossy(percent: Double) -> FaultProfile {
        FaultProfile(loss: percent / 100)
    }

    /// 5 % loss, 2 % duplication, 5 % reordering, 1 % corruption, 10 ms ± 5 ms.
    public static let hostile = FaultProfile(loss: 0.05, duplication: 0.02, reordering: 0.05, corruption: 0.01,
                                             latency: .milliseconds(10), jitter: .milliseconds(5))
}

/// How a connection ended without an error.
public enum ConnectionEnding: Sendable, Equatable {
    /// The session completed (sender: receiver said goodbye; receiver: goodbye exchanged).
    case finished
    /// The link went away; the caller may reconnect and resume.
    case linkLost
}

/// The rules by which a real-time driver runs and ends one connection, without I/O: the one place
/// they live, whatever moves the datagrams (the socket port, the async port). A driver's turn:
///
/// 1. report the endpoint's events (before sending: sending may block for a while);
/// 2. `follow` the transport's datagram sizes (an MTU change reaches the endpoint);
/// 3. transmit what the endpoint has, each datagram checked by `fits` (a larger one: the link is
///    lost, as a transport's `send` refuses it);
/// 4. `endingAfterSending`: a complete connection ends once settled, or after `linger`;
/// 5. wait for the peer at most `wait(deadline:now:)`; a closed link ends as `endingOnClose`;
/// 6. run the endpoint's timers.
public struct ConnectionDriver: Sendable {
    /// How long a complete connection waits for its last acknowledgements to leave before the
    /// caller disconnects.
    public static let linger: Duration = .milliseconds(300)
    /// The longest wait while lingering (the endpoint may settle at any moment).
    public static let lingerWait: Duration = .milliseconds(20)
    /// The longest wait when the endpoint has no deadline.
    public static let idleWait: Duration = .seconds(1)
    /// The shortest wait (a deadline already past is still a turn of the driver, not a spin).
    public static let shortestWait: Duration = .milliseconds(1)

    /// The sizes the endpoint was last told.
    public private(set) var maxDatagramSize: Int
    public private(set) var peerMaxDatagramSize: Int
    /// When the connection became complete.
    private var lingerStart: Instant?

    public init(maxDatagramSize: Int, peerMaxDatagramSize: Int) {
        self.maxDatagramSize = maxDatagramSize
        self.peerMaxDatagramSize = peerMaxDatagramSize
    }

    /// Step 2: tells the endpoint the transport's sizes if they changed.
    public mutating func follow<E: DatagramEndpoint>(maxDatagramSize: Int, peerMaxDatagramSize: Int, _ endpoint: inout E) {
        guard maxDatagramSize != self.maxDatagramSize || peerMaxDatagramSize != self.peerMaxDatagramSize else { return }
        self.maxDatagramSize = maxDatagramSize
        self.peerMaxDatagramSize = peerMaxDatagramSize
        endpoint.linkResized(maxDatagramSize: maxDatagramSize, peerMaxDatagramSize: peerMaxDatagramSize)
    }

    /// Step 3: whether the transport takes `datagram`.
    public func fits(_ datagram: [UInt8]) -> Bool { datagram.count <= maxDatagramSize }

    /// Step 4, once the endpoint has nothing more to send now (`backlog`: datagrams taken from it
    /// that the transport has not taken yet). `.finished`: end the connection now.
    public mutating func endingAfterSending(_ status: ConnectionStatus, backlog: Bool = false, now: Instant) -> ConnectionEnding? {
        guard status >= .complete else { return nil }
        if status == .settled && !backlog { return .finished }
        if let lingerStart, now.duration(since: lingerStart) > Self.linger { return .finished }
        lingerStart = lingerStart ?? now
        return nil
    }

    /// Whether the connection is lingering (complete, waiting for its last acknowledgements).
    public var isLingering: Bool { lingerStart != nil }

    /// Step 5: how long to wait for the peer before the next turn.
    public func wait(deadline: Instant?, now: Instant) -> Duration {
        var wait = deadline.map { $0.duration(since: now) } ?? Self.idleWait
        if isLingering { wait = min(wait, Self.lingerWait) }
        return max(wait, Self.shortestWait)
    }

    /// Step 5: the link closed under the driver.
    public static func endingOnClose(_ status: ConnectionStatus) -> ConnectionEnding {
        status >= .done ? .finished : .linkLost
    }
}

/// The sans-IO face of one end of a link: both sessions, a bare framing link, an attacker's end.
/// Every driver speaks only this: the virtual-time pump (`VirtualNetwork`: tests, simulation,
/// attacks, fuzzing, benchmarks, the wire-vector recorder), the real-time pump over a transport
/// (`SessionRunner`), and the wire-vector replay.
///
/// Besides datagrams and timers an endpoint says how its connection stands (`status`, which the
/// drivers' ending rules read: `ConnectionDriver`), hands over what happened (`takeEvents`), takes
/// a new datagram size (an MTU change), and takes inputs from its user (`take(_:now:)`: a person's
/// answer to a first-contact question), which a driver hands it as they come, not by polling.
/// Everything but the datagram calls has a default: an attacker's end needs none of it.
public protocol DatagramEndpoint {
    associatedtype Failure: Error
    /// What the endpoint reports to its user (a session's events).
    associatedtype Event = Never
    /// What its user tells the endpoint while a connection runs.
    associatedtype Input = Never
    /// The next datagram to transmit now, if any: call again until nil.
    mutating func nextDatagram(now: Instant) throws(Failure) -> [UInt8]?
    /// A datagram from the peer.
    mutating func receive(datagram: [UInt8], now: Instant) throws(Failure)
    /// Runs whatever timers are due at `now`.
    mutating func handleTimers(now: Instant) throws(Failure)
    /// When `handleTimers` next has something to do, if ever.
    var nextDeadline: Instant? { get }
    /// How the current connection stands.
    var status: ConnectionStatus { get }
    /// What happened since the last call, in order.
    mutating func takeEvents() -> [Event]
    /// The link's datagram sizes changed (an MTU change): ours, and the peer's.
    mutating func linkResized(maxDatagramSize: Int, peerMaxDatagramSize: Int)
    /// An input from the endpoint's user, at `now`.
    mutating func take(_ input: Input, now: Instant) throws(Failure)
}

/// How an endpoint's connection stands, as the drivers' ending rules read it. Ordered: each case
/// implies the ones before it.
public enum ConnectionStatus: Int, Comparable, Sendable {
    /// Work remains: the connection runs on.
    case running
    /// The work is done, so a link that closes now ends the connection as finished; the endpoint
    /// still waits for its peer (a receiver whose sender said goodbye).
    case done
    /// Complete: the driver ends the connection once it is settled, or after a short linger for
    /// the last acknowledgements.
    case complete
    /// Complete and nothing left to acknowledge: the driver ends the connection now.
    case settled

    public static func < (a: ConnectionStatus, b: ConnectionStatus) -> Bool { a.rawValue < b.rawValue }
}

extension DatagramEndpoint {
    public var status: ConnectionStatus { .running }
    public mutating func takeEvents() -> [Event] { [] }
    public mutating func linkResized(maxDatagramSize: Int, peerMaxDatagramSize: Int) {}
}

extension DatagramEndpoint where Input == Never {
    public mutating func take(_ input: Never, now: Instant) {}
}

extension DatagramEndpoint {
    /// Everything the endpoint has to send now, in order, and the error that stopped it if one
    /// did. More than `limit` from one call is a runaway endpoint (a window is at most 4096 frames).
    public mutating func drain(now: Instant, limit: Int = 10_000) -> (datagrams: [[UInt8]], error: Failure?) {
        var datagrams: [[UInt8]] = []
        do {
            while datagrams.count < limit, let datagram = try nextDatagram(now: now) { datagrams.append(datagram) }
        } catch {
            return (datagrams, error)
        }
        return (datagrams, nil)
    }
}

/// The sans-IO face of one end of a link: both sessions, a bare framing link, an attacker's end.
/// The drivers speak only this: `VirtualNetwork` (tests, simulation, attacks, fuzzing,
/// benchmarks) and the runner over a real transport.
public protocol DatagramEndpoint {
    associatedtype Failure: Error
    /// The next datagram to transmit now, if any: call again until nil.
    mutating func nextDatagram(now: Instant) throws(Failure) -> [UInt8]?
    /// A datagram from the peer.
    mutating func receive(datagram: [UInt8], now: Instant) throws(Failure)
    /// Runs whatever timers are due at `now`.
    mutating func handleTimers(now: Instant) throws(Failure)
    /// When `handleTimers` next has something to do, if ever.
    var nextDeadline: Instant? { get }
}

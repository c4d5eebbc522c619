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

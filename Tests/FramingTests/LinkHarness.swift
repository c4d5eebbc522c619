import Framing
import MemoryTransport
import Pipeline

/// Two `ReliableLink`s joined by a `SimulatedLink`, driven on a virtual clock: each step sends
/// everything both links have, advances the clock to the earliest delivery or deadline, delivers,
/// and runs the timers.
struct LinkHarness {
    var a: ReliableLink
    var b: ReliableLink
    var network: SimulatedLink
    var now = Instant(nanoseconds: 1_000_000_000)
    var receivedByA: [[UInt8]] = []
    var receivedByB: [[UInt8]] = []
    /// Side whose datagrams vanish and who is never driven (the peer went away).
    var vanished: SimulatedLink.Side?
    var steps = 0
    /// When set, every datagram either side sends goes into it (ReliableLinkTranscriptTests).
    var transcript: LinkTranscript?

    init(configuration: LinkConfiguration = .init(), datagramSize: Int, faults: FaultProfile, seed: UInt64) {
        a = ReliableLink(configuration: configuration, maxDatagramSize: datagramSize)
        b = ReliableLink(configuration: configuration, maxDatagramSize: datagramSize)
        network = SimulatedLink(faults: faults, maxDatagramSize: datagramSize, seed: seed)
    }

    var isQuiet: Bool { a.isIdle && b.isIdle && network.inFlightCount == 0 }

    mutating func flush() {
        if vanished != .a {
            while let d = a.nextDatagram(now: now) {
                transcript?.record(d, from: .a, at: now)
                network.transmit(d, from: .a, now: now)
            }
        }
        if vanished != .b {
            while let d = b.nextDatagram(now: now) {
                transcript?.record(d, from: .b, at: now)
                network.transmit(d, from: .b, now: now)
            }
        }
    }

    /// One step; false when nothing is left to happen.
    mutating func step() throws(LinkError) -> Bool {
        steps += 1
        flush()
        let candidates = [vanished == .a ? nil : a.nextDeadline,
                          vanished == .b ? nil : b.nextDeadline,
                          network.nextDeliveryTime].compactMap { $0 }
        guard let next = candidates.min() else { return false }
        now = max(now, next)
        for (side, datagram) in network.deliver(now: now) where side != vanished {
            switch side {
            case .a: try a.receive(datagram: datagram, now: now)
            case .b: try b.receive(datagram: datagram, now: now)
            }
            flush()   // as a real driver does: answer each datagram before the next one arrives
        }
        if vanished != .a { try a.handleTimers(now: now) }
        if vanished != .b { try b.handleTimers(now: now) }
        while let m = a.nextMessage() { receivedByA.append(m) }
        while let m = b.nextMessage() { receivedByB.append(m) }
        return true
    }

    /// Steps until both sides are idle with nothing in flight (or `maxSteps`).
    mutating func runUntilQuiet(maxSteps: Int = 5_000_000) throws(LinkError) {
        while steps < maxSteps {
            guard try step() else { return }
            if isQuiet { return }
        }
    }
}

/// Random messages of 1...maxSize bytes, reproducible from the seed.
func randomMessages(count: Int, maxSize: Int, seed: UInt64) -> [[UInt8]] {
    var random = SeededRandom(seed: seed)
    return (0..<count).map { _ in random.bytes(1 + Int(random.next() % UInt64(maxSize))) }
}

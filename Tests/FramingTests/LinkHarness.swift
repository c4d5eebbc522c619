import Framing
import MemoryTransport
import Pipeline

/// Two `ReliableLink`s on the virtual network (a `SimulatedLink` with faults), stepped by its
/// discipline: a round, and when nothing moved, a tick to the next delivery or deadline.
struct LinkHarness {
    private var net: VirtualNetwork
    private var ends: (a: End, b: End)
    var receivedByA: [[UInt8]] = []
    var receivedByB: [[UInt8]] = []
    var steps = 0
    /// When set, every datagram either side sends goes into it (ReliableLinkTranscriptTests).
    var transcript: LinkTranscript?

    init(configuration: LinkConfiguration = .init(), datagramSize: Int, faults: FaultProfile, seed: UInt64) {
        ends = (End(link: ReliableLink(configuration: configuration, maxDatagramSize: datagramSize)),
                End(link: ReliableLink(configuration: configuration, maxDatagramSize: datagramSize)))
        net = VirtualNetwork(link: SimulatedLink(faults: faults, maxDatagramSize: datagramSize, seed: seed),
                             now: Instant(nanoseconds: 1_000_000_000))
    }

    var a: ReliableLink {
        get { ends.a.link }
        set { ends.a.link = newValue }
    }
    var b: ReliableLink {
        get { ends.b.link }
        set { ends.b.link = newValue }
    }
    var network: SimulatedLink {
        get { net.link }
        set { net.link = newValue }
    }
    var now: Instant { net.now }

    /// Side whose datagrams vanish and who is never driven (the peer went away).
    var vanished: SimulatedLink.Side? {
        didSet {
            ends.a.gone = vanished == .a
            ends.b.gone = vanished == .b
        }
    }

    var isQuiet: Bool { a.isIdle && b.isIdle && network.inFlightCount == 0 }

    /// One round, or a tick if the round moved nothing; false when nothing is left to happen.
    mutating func step() throws(LinkError) -> Bool {
        steps += 1
        var transcript = self.transcript
        net.observer = transcript == nil ? nil : { now, event in
            if case .sent(let from, let datagram) = event { transcript?.record(datagram, from: from, at: now) }
        }
        defer {
            self.transcript = transcript
            net.observer = nil
            while let m = ends.a.link.nextMessage() { receivedByA.append(m) }
            while let m = ends.b.link.nextMessage() { receivedByB.append(m) }
        }
        do throws(VirtualNetwork.Failure<LinkError, LinkError>) {
            if try net.round(&ends.a, &ends.b) == .moved { return true }
            return try net.tick(&ends.a, &ends.b)
        } catch {
            switch error {
            case .a(let failure), .b(let failure): throw failure
            }
        }
    }

    /// Steps until both sides are idle with nothing in flight (or `maxSteps`).
    mutating func runUntilQuiet(maxSteps: Int = 5_000_000) throws(LinkError) {
        while steps < maxSteps {
            guard try step() else { return }
            if isQuiet { return }
        }
    }

    /// One side's link; a side that went away sends, hears and times nothing.
    private struct End: DatagramEndpoint {
        typealias Failure = LinkError
        var link: ReliableLink
        var gone = false

        mutating func nextDatagram(now: Instant) -> [UInt8]? { gone ? nil : link.nextDatagram(now: now) }
        mutating func receive(datagram: [UInt8], now: Instant) throws(LinkError) {
            if !gone { try link.receive(datagram: datagram, now: now) }
        }
        mutating func handleTimers(now: Instant) throws(LinkError) {
            if !gone { try link.handleTimers(now: now) }
        }
        var nextDeadline: Instant? { gone ? nil : link.nextDeadline }
    }
}

/// Random messages of 1...maxSize bytes, reproducible from the seed.
func randomMessages(count: Int, maxSize: Int, seed: UInt64) -> [[UInt8]] {
    var random = SeededRandom(seed: seed)
    return (0..<count).map { _ in random.bytes(1 + Int(random.next() % UInt64(maxSize))) }
}

import Framing
import Pipeline

/// Real traffic for seeds: two `ReliableLink`s exchanging messages over a lossy in-process hop.
enum LinkCapture {
    struct Run {
        /// Every datagram sent, both directions, in order.
        var all: [[UInt8]] = []
        /// What B received from A (drops excluded), in order.
        var toB: [[UInt8]] = []
        /// What A received from B.
        var toA: [[UInt8]] = []
        /// Messages B delivered.
        var deliveredAtB: [[UInt8]] = []
    }

    /// Messages of several sizes, so fragments of every kind appear.
    static let sampleMessages: [[UInt8]] = [
        Array("hello".utf8),
        (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 7) },
        [0x00],
        (0..<1200).map { UInt8(truncatingIfNeeded: $0 ^ 0x5A) },
    ]

    static func exchange(datagramSize: Int) -> [[UInt8]] {
        run(configuration: LinkConfiguration(window: 32, ackEvery: 4), datagramSize: datagramSize).all
    }

    /// A sends `messages` to B and B answers with one message; every fifth datagram from A is lost
    /// the first time (so selective acks and retransmissions appear).
    static func run(configuration: LinkConfiguration, datagramSize: Int,
                    messages: [[UInt8]] = sampleMessages) -> Run {
        var a = ReliableLink(configuration: configuration, maxDatagramSize: datagramSize)
        var b = ReliableLink(configuration: configuration, maxDatagramSize: datagramSize)
        var run = Run()
        var now = Instant.zero
        for message in messages { try? a.send(message: message) }
        try? b.send(message: Array("reply".utf8))
        var sentByA = 0
        for _ in 0..<400 {
            while let datagram = a.nextDatagram(now: now) {
                run.all.append(datagram)
                sentByA += 1
                if sentByA % 5 == 3 { continue }   // lost
                run.toB.append(datagram)
                try? b.receive(datagram: datagram, now: now)
            }
            while let message = b.nextMessage() { run.deliveredAtB.append(message) }
            while let datagram = b.nextDatagram(now: now) {
                run.all.append(datagram)
                run.toA.append(datagram)
                try? a.receive(datagram: datagram, now: now)
            }
            while a.nextMessage() != nil {}
            if a.isIdle && b.isIdle { break }
            now = now.advanced(by: .milliseconds(50))
            try? a.handleTimers(now: now)
            try? b.handleTimers(now: now)
        }
        return run
    }
}

import Framing
import MemoryTransport
import Pipeline
import Testing

/// Wire efficiency: file bytes ÷ every datagram byte in both directions, 1 MiB in 4114-byte
/// messages (a 4096-byte record plaintext + 1 type byte + 17 bytes of record overhead), clean link.
/// A measurement, printed; the bounds only catch gross regressions.
@Suite struct EfficiencyReport {
    static func measure(datagramSize: Int, faults: FaultProfile = .clean, seed: UInt64 = 1)
        throws -> (payload: Int, forward: Int, backward: Int) {
        var h = LinkHarness(datagramSize: datagramSize, faults: faults, seed: seed)
        var remaining = 1 << 20
        var random = SeededRandom(seed: 2)
        var payload = 0
        while remaining > 0 {
            let n = min(4114, remaining)
            try h.a.send(message: random.bytes(n))
            remaining -= n
            payload += n
        }
        try h.runUntilQuiet()
        #expect(h.receivedByB.reduce(0) { $0 + $1.count } == payload)
        print("  sender \(h.a.statistics)\n  receiver \(h.b.statistics)")
        return (payload, h.network.bytesTransmitted(from: .a), h.network.bytesTransmitted(from: .b))
    }

    @Test(arguments: [(20, 0.76), (182, 0.96), (244, 0.96), (510, 0.97)])
    func cleanLinkEfficiency(datagramSize: Int, floor: Double) throws {
        let m = try Self.measure(datagramSize: datagramSize)
        let ratio = Double(m.payload) / Double(m.forward + m.backward)
        print("efficiency dgram \(datagramSize): payload \(m.payload) B, data dir \(m.forward) B, ack dir \(m.backward) B, ratio \((ratio * 10000).rounded() / 10000)")
        #expect(ratio >= floor)
    }

    @Test(arguments: [20, 244])
    func hostileLinkEfficiency(datagramSize: Int) throws {
        let m = try Self.measure(datagramSize: datagramSize, faults: .hostile, seed: 5)
        let ratio = Double(m.payload) / Double(m.forward + m.backward)
        print("efficiency dgram \(datagramSize) hostile (5% loss, 2% dup, 5% reorder, 1% corrupt): data dir \(m.forward) B, ack dir \(m.backward) B, ratio \((ratio * 10000).rounded() / 10000)")
        #expect(ratio >= 0.5)
    }
}

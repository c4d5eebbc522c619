import Admission
import Pipeline

/// Rows for the per-device backoff (rule 7).
extension AdmissionScript {
    static let backoffRows: [AdmissionScript] = [
        AdmissionScript("backoff doubles after each failed handshake and refuses until exactly its end", rules: [7], [
            .on(0, open(1, devA), [.admit(ch(1))]),
            .on(0, closed(1, .handshakeFailed)),
            .on(tickBefore(2), open(2, devA), [.refuse(ch(2), .backoff(until: seconds(2)))]),
            .on(2, open(3, devA), [.admit(ch(3))]),
            .on(2, closed(3, .handshakeFailed)),
            .on(5, open(4, devA), [.refuse(ch(4), .backoff(until: seconds(6)))]),
            .on(6, open(5, devA), [.admit(ch(5))]),
            .on(6, closed(5, .handshakeFailed)),
            .on(13, open(6, devA), [.refuse(ch(6), .backoff(until: seconds(14)))]),
            .on(13, open(7, devB), [.admit(ch(7))]),  // another device is not held back
        ]),
        AdmissionScript("backoff stops growing at 60 s", rules: [7], failuresInARow(8)),
        AdmissionScript("authenticating forgets the backoff", rules: [7], [
            .on(0, open(1, devA), [.admit(ch(1))]),
            .on(0, closed(1, .handshakeFailed)),
            .on(2, open(2, devA), [.admit(ch(2))]),
            .on(2, closed(2, .handshakeFailed)),
            .on(6, open(3, devA), [.admit(ch(3))]),
            .on(7, auth(3, alice)),
            .on(8, closed(3)),
            .on(8, open(4, devA), [.admit(ch(4))]),
            .on(9, closed(4, .handshakeFailed)),
            .on(10, open(5, devA), [.refuse(ch(5), .backoff(until: seconds(11)))]),  // 2 s again, not 8
        ]),
        AdmissionScript("a channel that ends without failing, or after authenticating, starts no backoff", rules: [7], [
            .on(0, open(1, devA), [.admit(ch(1))]),
            .on(1, closed(1, .lost)),
            .on(1, open(2, devA), [.admit(ch(2))]),
            .on(2, closed(2, .ended)),
            .on(2, open(3, devA), [.admit(ch(3))]),
            .on(3, auth(3, alice)),
            .on(4, closed(3, .handshakeFailed)),
            .on(4, open(4, devA), [.admit(ch(4))]),
        ]),
        AdmissionScript("backoff remembers at most rememberedDevices devices and forgets the oldest",
                        rules: [7], configuration: .init(backoff: .init(rememberedDevices: 2)), [
            .on(0, open(1, devA), [.admit(ch(1))]), .on(0, closed(1, .handshakeFailed)),
            .on(0, open(2, devB), [.admit(ch(2))]), .on(0, closed(2, .handshakeFailed)),
            .on(1, open(3, devC), [.admit(ch(3))]), .on(1, closed(3, .handshakeFailed)),
            .on(1, open(4, devA), [.admit(ch(4))]),  // forgotten, though inside its 2 s
            .on(1, open(5, devB), [.refuse(ch(5), .backoff(until: seconds(2)))]),
        ]),
    ]

    /// `count` failed handshakes from devA, each at the end of the backoff before it; after each,
    /// a channel a tick before the end is refused with `min(2 · 2^(n-1), 60)` s.
    static func failuresInARow(_ count: Int) -> [Step] {
        var steps: [Step] = []
        var now = 0.0
        var delay = 2.0
        for failure in 0..<count {
            let channel = UInt64(2 * failure + 1)
            steps.append(.on(now, open(channel, devA), [.admit(ch(channel))]))
            steps.append(.on(now, closed(channel, .handshakeFailed)))
            let end = now + delay
            steps.append(.on(tickBefore(end), open(channel + 1, devA), [.refuse(ch(channel + 1), .backoff(until: seconds(end)))]))
            now = end
            delay = min(delay * 2, 60)
        }
        return steps
    }
}

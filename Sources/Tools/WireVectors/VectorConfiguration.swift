import Framing
import Session
import Transfer

/// The endpoints' settings in a vector: every knob that changes what goes on the wire, written
/// out in full (no defaults), so a second implementation can set itself up the same way.
public struct VectorConfiguration: Equatable, Sendable {
    public var session: SessionConfiguration
    /// Offers larger than this are rejected (receiver).
    public var maxFileSize: UInt64
    /// The transfer extensions (docs/protocol.md §8) the receiver lists and grants and the sender
    /// asks for: the `extensions:` header line, absent when none (every vector before them).
    public var extensions: TransferExtensions

    public init(session: SessionConfiguration = .init(), maxFileSize: UInt64 = 1 << 40, extensions: TransferExtensions = []) {
        self.session = session
        self.maxFileSize = maxFileSize
        self.extensions = extensions
    }

    public static func == (a: VectorConfiguration, b: VectorConfiguration) -> Bool {
        a.maxFileSize == b.maxFileSize && a.extensions == b.extensions && a.session.link == b.session.link
            && a.session.handshakeTimeout == b.session.handshakeTimeout
            && a.session.idleTimeout == b.session.idleTimeout
            && a.session.rekeyAfterRecords == b.session.rekeyAfterRecords
    }

    /// The `session:` header line's fields, in order. Durations are whole milliseconds.
    var sessionFields: [(String, UInt64)] {
        [("handshake-timeout-ms", Self.milliseconds(session.handshakeTimeout)),
         ("idle-timeout-ms", Self.milliseconds(session.idleTimeout)),
         ("rekey-after-records", session.rekeyAfterRecords),
         ("max-file-size", maxFileSize)]
    }

    /// The `link:` header line's fields, in order.
    var linkFields: [(String, UInt64)] {
        let link = session.link
        return [("window", UInt64(link.window)),
                ("ack-every", UInt64(link.ackEvery)),
                ("ack-delay-ms", Self.milliseconds(link.ackDelay)),
                ("initial-rto-ms", Self.milliseconds(link.initialRTO)),
                ("min-rto-ms", Self.milliseconds(link.minRTO)),
                ("max-rto-ms", Self.milliseconds(link.maxRTO)),
                ("link-dead-after-ms", Self.milliseconds(link.linkDeadAfter)),
                ("max-message-length", UInt64(link.maxMessageLength))]
    }

    static let sessionKeys = VectorConfiguration().sessionFields.map(\.0)
    static let linkKeys = VectorConfiguration().linkFields.map(\.0)

    /// Rebuilds a configuration from the two lines' fields (every key present, checked by the caller).
    init(session fields: [String: UInt64], link linkFields: [String: UInt64], extensions: TransferExtensions) {
        func ms(_ key: String, _ table: [String: UInt64]) -> Duration { .milliseconds(Int64(clamping: table[key] ?? 0)) }
        func int(_ key: String) -> Int { Int(clamping: linkFields[key] ?? 0) }
        let link = LinkConfiguration(window: int("window"), ackEvery: int("ack-every"),
                                     ackDelay: ms("ack-delay-ms", linkFields), initialRTO: ms("initial-rto-ms", linkFields),
                                     minRTO: ms("min-rto-ms", linkFields), maxRTO: ms("max-rto-ms", linkFields),
                                     linkDeadAfter: ms("link-dead-after-ms", linkFields),
                                     maxMessageLength: int("max-message-length"))
        self.init(session: SessionConfiguration(link: link, handshakeTimeout: ms("handshake-timeout-ms", fields),
                                                rekeyAfterRecords: fields["rekey-after-records"] ?? 0,
                                                idleTimeout: ms("idle-timeout-ms", fields)),
                  maxFileSize: fields["max-file-size"] ?? 0, extensions: extensions)
    }

    private static func milliseconds(_ duration: Duration) -> UInt64 {
        UInt64(clamping: duration.nanoseconds / 1_000_000)
    }
}

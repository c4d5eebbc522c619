import Session
import Pipeline

extension WireVector {
    /// The first line after the comments; a parser refuses any other.
    static let formatLine = "blesend-wire-vector 1"

    /// The vector as text (Tests/Vectors/blesend/README.md): header, a blank line, the log.
    public var text: String {
        var lines = comments.map { $0.isEmpty ? "#" : "# \($0)" }
        lines.append("format: \(Self.formatLine)")
        switch expect {
        case .success:
            lines.append("expect: success")
        case .failure(let code, let side):
            lines.append("expect: \(code)")
            lines.append("raised-by: \(side.rawValue)")
        }
        lines.append("session: " + configuration.sessionFields.map { "\($0.0)=\($0.1)" }.joined(separator: " "))
        lines.append("link: " + configuration.linkFields.map { "\($0.0)=\($0.1)" }.joined(separator: " "))
        if !configuration.extensions.isEmpty { lines.append("extensions: \(configuration.extensions.rawValue)") }
        lines.append("sender-secret: \(Hex.encode(senderSecret))")
        lines.append("sender-public: \(Hex.encode(senderPublic))")
        lines.append("receiver-secret: \(Hex.encode(receiverSecret))")
        lines.append("receiver-public: \(Hex.encode(receiverPublic))")
        lines.append("pinned-receiver-key: \(Hex.encode(pinnedReceiverKey))")
        lines += trustedSenders.map { "trusted-sender: \(Hex.encode($0))" }
        for (index, connection) in connections.enumerated() {
            lines.append("connection: \(index + 1) wall-clock=\(connection.wallClock)"
                + " sender-datagram=\(connection.senderDatagramSize) receiver-datagram=\(connection.receiverDatagramSize)"
                + " sender-ephemeral=\(Hex.encode(connection.senderEphemeral))"
                + " receiver-ephemeral=\(Hex.encode(connection.receiverEphemeral))"
                + (connection.receiverBusy.map { " receiver-busy=\($0.retryAfterSeconds)/\($0.ahead)" } ?? ""))
        }
        lines += transferIDs.map { "transfer-id: \(Hex.encode($0))" }
        lines += files.map { "file: name=\(Hex.encode($0.name)) stored=\($0.stored ? "yes" : "no") data=\(Hex.encode($0.contents))" }
        lines.append("")
        lines += events.map(Self.line(for:))
        return lines.joined(separator: "\n") + "\n"
    }

    static func line(for event: Event) -> String {
        let time = "t=\(timeText(event.time))"
        switch event.kind {
        case .connect(let number): return "\(time) connect \(number)"
        case .datagram(let route, let bytes): return "\(time) \(route.rawValue) \(Hex.encode(bytes))"
        case .tick(let senderDue, let receiverDue):
            let due = [senderDue ? "sender" : nil, receiverDue ? "receiver" : nil].compactMap { $0 }
            return "\(time) tick" + due.map { " \($0)" }.joined()
        case .cut: return "\(time) cut"
        }
    }

    /// Seconds with nine decimals: `12.000200000`.
    static func timeText(_ instant: Instant) -> String {
        let fraction = String(instant.nanoseconds % 1_000_000_000)
        return "\(instant.nanoseconds / 1_000_000_000)." + String(repeating: "0", count: 9 - fraction.count) + fraction
    }
}

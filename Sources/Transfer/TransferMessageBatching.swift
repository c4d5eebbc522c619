extension TransferMessage {
    /// Whether this message may share a record with others in a `batch`.
    public var batchable: Bool { Self.mayShareARecord(kind) }

    /// Whether messages of `kind` may stand in a `batch`: all but `batch` itself, `hello`, `bye`
    /// (always alone in a final record) and `pending`, `busy` and `notTrusted` (message 2 only).
    static func mayShareARecord(_ kind: Kind) -> Bool { ![.batch, .hello, .bye].contains(kind) && !Kind.messageTwoOnly.contains(kind) }

    /// `messages` packed into as few messages as fit in `limit` bytes each, in order: a `batch`
    /// where several fit together, the message itself where it stands alone.
    public static func packed(_ messages: [TransferMessage], limit: Int) -> [TransferMessage] {
        var out: [TransferMessage] = []
        var group: [TransferMessage] = []
        var size = 1
        func flush() {
            if group.count == 1, let only = group.first { out.append(only) } else if !group.isEmpty { out.append(.batch(group)) }
            group.removeAll()
            size = 1
        }
        for message in messages {
            guard message.batchable, 1 + 2 + message.wireLength <= limit else {
                flush()
                out.append(message)
                continue
            }
            if size + 2 + message.wireLength > limit { flush() }
            group.append(message)
            size += 2 + message.wireLength
        }
        flush()
        return out
    }
}

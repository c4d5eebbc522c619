import Pipeline

/// What `blerecv status` shows: the running receiver's `ReceiverActivity` and what it is, as one
/// `status` JSON line (docs/json-events.md; `blerecv status` renders it for people). Pure.
struct StatusSnapshot: Sendable {
    var activity: ReceiverActivity
    var adapter: String?
    var fingerprint: String
    var advertising: Bool
    var outDirectory: String?
    var partialsKept: Int?
    var now: Instant

    /// One line per transfer channel, in channel order.
    private var links: [(id: UInt64, channel: ReceiverActivity.Channel)] {
        activity.channels.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    var json: JSONLine {
        let links: [JSONLine.Value] = self.links.map { id, channel in
            let rate = activity.rate(of: channel, at: now)
            var eta: JSONLine.Value = .null
            if let rate, rate > 0, let total = channel.total, total >= channel.done {
                eta = .int(Int64((Double(total - channel.done) / rate).rounded()))
            }
            return .object([
                ("channel", .int(Int64(id))), ("device", .of(channel.device)), ("transport", .string(channel.transport)),
                ("peer", .of(channel.peer)), ("fingerprint", .of(channel.fingerprint)), ("file", .of(channel.file)),
                ("bytes", channel.file == nil ? .null : .of(channel.done)), ("total", .of(channel.total)),
                ("rate", rate.map { .double(($0).rounded()) } ?? .null), ("eta", eta),
            ])
        }
        let recent: [JSONLine.Value] = activity.recent.reversed().map { result in
            .object([("name", .string(result.name)), ("peer", .string(result.peer)), ("bytes", .of(result.bytes)),
                     ("saved", .bool(result.saved))])
        }
        return JSONLine("status", [
            ("adapter", .of(adapter)), ("fingerprint", .string(fingerprint)), ("advertising", .bool(advertising)),
            ("trusted", .int(Int64(activity.trusted))), ("max_links", .int(Int64(activity.maxLinks))),
            ("out", .of(outDirectory)), ("partials", partialsKept.map { .int(Int64($0)) } ?? .null),
            ("status", .string(activity.statusLine)), ("links", .array(links)), ("recent", .array(recent)),
        ])
    }
}

import Pipeline

/// The `busy` event of `--json` (docs/json-events.md): blesend waits for a busy receiver.
extension JSONLine {
    /// `ahead`: how many senders the receiver told `busy` before us still wait; nil when the
    /// receiver did not answer at all (an older receiver, or not a receiver).
    static func busy(device: String?, retryIn: Duration, ahead: Int?) -> JSONLine {
        JSONLine("busy", [("device", .of(device)), ("retry_in", .double((retryIn.seconds * 10).rounded() / 10)),
                          ("ahead", ahead.map { .int(Int64($0)) } ?? .null)])
    }
}

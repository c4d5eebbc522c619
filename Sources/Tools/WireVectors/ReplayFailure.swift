import Pipeline

/// How an endpoint replayed against a vector departed from it.
public struct ReplayFailure: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: Equatable, Sendable {
        /// The header cannot be turned into endpoints.
        case setup(String)
        case malformedLog(String)
        /// The endpoint sent `actual` where the log has `expected`.
        case wrongDatagram(expected: [UInt8], actual: [UInt8])
        /// The log has a datagram from the endpoint that it did not send.
        case missingDatagram([UInt8])
        /// The endpoint sent a datagram the log does not have.
        case extraDatagram([UInt8])
        /// The endpoint raised an error (its `code`) the log does not expect there.
        case unexpectedError(String)
        /// The log goes on involving the endpoint after the error that should have ended it.
        case logContinuesAfterError(String)
        /// The endpoint's `nextDeadline` does not fit the recorded tick.
        case wrongDeadline(expected: String, actual: Instant?)
        /// The end state differs from `expect:` or the stored files.
        case wrongOutcome(String)
    }

    /// The side replayed.
    public var side: WireVector.Side?
    /// 1-based position in the log, when the failure is tied to a line.
    public var event: Int?
    public var time: Instant?
    public var kind: Kind

    init(side: WireVector.Side? = nil, event: Int? = nil, time: Instant? = nil, _ kind: Kind) {
        self.side = side
        self.event = event
        self.time = time
        self.kind = kind
    }

    public var description: String {
        var place = side.map { "\($0.rawValue) replay" } ?? "replay"
        if let event { place += ", event \(event)" }
        if let time { place += " (t=\(WireVector.timeText(time)))" }
        switch kind {
        case .setup(let detail): return "\(place): cannot set up: \(detail)"
        case .malformedLog(let detail): return "\(place): malformed log: \(detail)"
        case .wrongDatagram(let expected, let actual):
            return "\(place): sent\n  \(Hex.encode(actual))\nwhere the log has\n  \(Hex.encode(expected))"
        case .missingDatagram(let expected): return "\(place): did not send\n  \(Hex.encode(expected))"
        case .extraDatagram(let actual): return "\(place): sent a datagram the log does not have\n  \(Hex.encode(actual))"
        case .unexpectedError(let code): return "\(place): raised \(code), which the log does not expect here"
        case .logContinuesAfterError(let code): return "\(place): the log goes on after \(code)"
        case .wrongDeadline(let expected, let actual):
            return "\(place): next deadline \(actual.map(WireVector.timeText) ?? "none"), expected \(expected)"
        case .wrongOutcome(let detail): return "\(place): \(detail)"
        }
    }
}

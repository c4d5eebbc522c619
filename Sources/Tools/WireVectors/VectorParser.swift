import Session
import Transfer
import Pipeline

extension WireVector {
    /// Reads a vector from its text form (Tests/Vectors/blesend/README.md).
    public init(parsing text: String) throws(VectorParseError) {
        var parser = VectorParser()
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.hasSuffix("\r") ? rawLine.dropLast() : rawLine
            try parser.take(line, number: index + 1)
        }
        self = try parser.finish()
    }
}

/// Line-by-line reader behind `WireVector(parsing:)`.
struct VectorParser {
    private var comments: [String] = []
    private var sawFormat = false
    private var inLog = false
    private var single: [String: (line: Int, value: Substring)] = [:]
    private var trusted: [[UInt8]] = []
    private var connections: [WireVector.Connection] = []
    private var transferIDs: [[UInt8]] = []
    private var files: [WireVector.File] = []
    private var events: [WireVector.Event] = []
    private var connectsSeen = 0

    private static let singleKeys = ["expect", "raised-by", "session", "link", "extensions", "sender-secret", "sender-public",
                                     "receiver-secret", "receiver-public", "pinned-receiver-key"]
    /// Keys a vector may leave out.
    private static let optionalKeys: Set = ["raised-by", "extensions"]

    mutating func take(_ line: Substring, number: Int) throws(VectorParseError) {
        if line.allSatisfy(\.isWhitespace) { return }
        if line.hasPrefix("#") {
            // Comments in the header are kept (the first says what the vector is); in the log, skipped.
            let body = line.dropFirst()
            if !inLog { comments.append(String(body.hasPrefix(" ") ? body.dropFirst() : body)) }
            return
        }
        if line.hasPrefix("t=") {
            guard sawFormat else { throw VectorParseError(line: number, .wrongFormat) }
            inLog = true
            try takeEvent(line, number: number)
            return
        }
        guard !inLog else { throw VectorParseError(line: number, .headerAfterLog) }
        guard let colon = line.firstIndex(of: ":") else { throw VectorParseError(line: number, .badEvent("neither 'key: value' nor 't=…'")) }
        let key = String(line[..<colon])
        let value = line[line.index(after: colon)...].drop { $0 == " " }
        guard sawFormat || key != "format" else {
            guard value == WireVector.formatLine else { throw VectorParseError(line: number, .wrongFormat) }
            sawFormat = true
            return
        }
        guard sawFormat else { throw VectorParseError(line: number, .wrongFormat) }
        switch key {
        case "trusted-sender":
            trusted.append(try Self.key(value, key: key, line: number))
        case "connection":
            connections.append(try Self.connection(value, expected: connections.count + 1, line: number))
        case "transfer-id":
            transferIDs.append(try Self.hex(value, key: key, line: number, count: 16))
        case "file":
            files.append(try Self.file(value, line: number))
        case _ where Self.singleKeys.contains(key):
            guard single[key] == nil else { throw VectorParseError(line: number, .repeatedKey(key)) }
            single[key] = (number, value)
        default:
            throw VectorParseError(line: number, .unknownKey(key))
        }
    }

    func finish() throws(VectorParseError) -> WireVector {
        guard sawFormat else { throw VectorParseError(line: 0, .wrongFormat) }
        for key in Self.singleKeys where !Self.optionalKeys.contains(key) && single[key] == nil {
            throw VectorParseError(line: 0, .missingKey(key))
        }
        guard !connections.isEmpty else { throw VectorParseError(line: 0, .missingKey("connection")) }
        return WireVector(
            comments: comments, expect: try expectation(), configuration: try configuration(),
            senderSecret: try keyValue("sender-secret"), receiverSecret: try keyValue("receiver-secret"),
            senderPublic: try keyValue("sender-public"), receiverPublic: try keyValue("receiver-public"),
            pinnedReceiverKey: try keyValue("pinned-receiver-key"), trustedSenders: trusted,
            connections: connections, transferIDs: transferIDs, files: files, events: events)
    }

    // MARK: - Header values

    private func expectation() throws(VectorParseError) -> WireVector.Expectation {
        guard let (line, code) = single["expect"] else { throw VectorParseError(line: 0, .missingKey("expect")) }
        guard !code.isEmpty, !code.contains(" ") else {
            throw VectorParseError(line: line, .badValue(key: "expect", detail: "'success' or one error code"))
        }
        let raisedBy = single["raised-by"]
        if code == "success" {
            if let raisedBy { throw VectorParseError(line: raisedBy.line, .badValue(key: "raised-by", detail: "only for a failure")) }
            return .success
        }
        guard let raisedBy else { throw VectorParseError(line: 0, .missingKey("raised-by")) }
        guard let side = WireVector.Side(rawValue: String(raisedBy.value)) else {
            throw VectorParseError(line: raisedBy.line, .badValue(key: "raised-by", detail: "'sender' or 'receiver'"))
        }
        return .failure(code: String(code), raisedBy: side)
    }

    private func configuration() throws(VectorParseError) -> VectorConfiguration {
        func numbers(_ key: String, _ required: [String]) throws(VectorParseError) -> [String: UInt64] {
            guard let (line, value) = single[key] else { throw VectorParseError(line: 0, .missingKey(key)) }
            let fields = try Self.fields(value, key: key, line: line, required: required)
            var result: [String: UInt64] = [:]
            for (name, text) in fields {
                guard let number = UInt64(text) else {
                    throw VectorParseError(line: line, .badValue(key: "\(key) \(name)", detail: "not a whole number"))
                }
                result[name] = number
            }
            return result
        }
        var extensions = TransferExtensions()
        if let (line, value) = single["extensions"] {
            guard let bits = UInt32(value) else { throw VectorParseError(line: line, .badValue(key: "extensions", detail: "not a u32")) }
            extensions = TransferExtensions(rawValue: bits)
        }
        return VectorConfiguration(session: try numbers("session", VectorConfiguration.sessionKeys),
                                   link: try numbers("link", VectorConfiguration.linkKeys), extensions: extensions)
    }

    private func keyValue(_ key: String) throws(VectorParseError) -> [UInt8] {
        guard let (line, value) = single[key] else { throw VectorParseError(line: 0, .missingKey(key)) }
        return try Self.key(value, key: key, line: line)
    }

    private static func key(_ value: Substring, key: String, line: Int) throws(VectorParseError) -> [UInt8] {
        try hex(value, key: key, line: line, count: 32)
    }

    private static func hex(_ value: Substring, key: String, line: Int, count: Int? = nil) throws(VectorParseError) -> [UInt8] {
        guard let bytes = Hex.decode(value) else { throw VectorParseError(line: line, .badValue(key: key, detail: "not hex")) }
        if let count, bytes.count != count {
            throw VectorParseError(line: line, .badValue(key: key, detail: "\(bytes.count) bytes, expected \(count)"))
        }
        return bytes
    }

    /// `name=value` fields separated by spaces, each of `required` exactly once, each of
    /// `optional` at most once, no others.
    private static func fields(_ value: Substring, key: String, line: Int, required: [String],
                               optional: [String] = []) throws(VectorParseError) -> [String: Substring] {
        var result: [String: Substring] = [:]
        for field in value.split(separator: " ") {
            guard let equals = field.firstIndex(of: "=") else {
                throw VectorParseError(line: line, .badValue(key: key, detail: "'\(field)' is not name=value"))
            }
            let name = String(field[..<equals])
            guard required.contains(name) || optional.contains(name) else { throw VectorParseError(line: line, .unknownKey("\(key) \(name)")) }
            guard result[name] == nil else { throw VectorParseError(line: line, .repeatedKey("\(key) \(name)")) }
            result[name] = field[field.index(after: equals)...]
        }
        for name in required where result[name] == nil {
            throw VectorParseError(line: line, .missingKey("\(key) \(name)"))
        }
        return result
    }

    private static func connection(_ value: Substring, expected: Int, line: Int) throws(VectorParseError) -> WireVector.Connection {
        let number = value.prefix { $0 != " " }
        guard Int(number) == expected else {
            throw VectorParseError(line: line, .badValue(key: "connection", detail: "expected number \(expected)"))
        }
        let names = ["wall-clock", "sender-datagram", "receiver-datagram", "sender-ephemeral", "receiver-ephemeral"]
        let fields = try fields(value.dropFirst(number.count), key: "connection", line: line, required: names,
                                optional: ["receiver-busy"])
        func size(_ name: String) throws(VectorParseError) -> Int {
            guard let text = fields[name], let size = Int(text), size >= 1 else {
                throw VectorParseError(line: line, .badValue(key: "connection \(name)", detail: "not a datagram size"))
            }
            return size
        }
        guard let clockText = fields["wall-clock"], let wallClock = UInt64(clockText) else {
            throw VectorParseError(line: line, .badValue(key: "connection wall-clock", detail: "not nanoseconds"))
        }
        var busy: BusyAnswer?
        if let text = fields["receiver-busy"] {
            let parts = text.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2, let seconds = UInt16(parts[0]), seconds >= 1, seconds <= TransferConstants.maxBusyRetryAfter,
                  let ahead = UInt8(parts[1]) else {
                throw VectorParseError(line: line, .badValue(key: "connection receiver-busy",
                                                             detail: "expected SECONDS/AHEAD, 1...\(TransferConstants.maxBusyRetryAfter) and 0...255"))
            }
            busy = BusyAnswer(retryAfterSeconds: seconds, ahead: ahead)
        }
        return WireVector.Connection(
            wallClock: wallClock, senderDatagramSize: try size("sender-datagram"), receiverDatagramSize: try size("receiver-datagram"),
            senderEphemeral: try Self.key(fields["sender-ephemeral"] ?? "", key: "connection sender-ephemeral", line: line),
            receiverEphemeral: try Self.key(fields["receiver-ephemeral"] ?? "", key: "connection receiver-ephemeral", line: line),
            receiverBusy: busy)
    }

    private static func file(_ value: Substring, line: Int) throws(VectorParseError) -> WireVector.File {
        let fields = try fields(value, key: "file", line: line, required: ["name", "stored", "data"])
        let stored: Bool
        switch fields["stored"] {
        case "yes": stored = true
        case "no": stored = false
        default: throw VectorParseError(line: line, .badValue(key: "file stored", detail: "'yes' or 'no'"))
        }
        return WireVector.File(name: try hex(fields["name"] ?? "", key: "file name", line: line), 
                               contents: try hex(fields["data"] ?? "", key: "file data", line: line), stored: stored)
    }

    // MARK: - Log lines

    private mutating func takeEvent(_ line: Substring, number: Int) throws(VectorParseError) {
        let words = line.split(separator: " ")
        guard let first = words.first, let time = Self.time(first.dropFirst(2)), words.count >= 2 else {
            throw VectorParseError(line: number, .badEvent("expected 't=SECONDS.NANOSECONDS EVENT'"))
        }
        if let last = events.last, time < last.time { throw VectorParseError(line: number, .timeGoesBack) }
        let word = words[1]
        let rest = words.dropFirst(2)
        let kind: WireVector.Event.Kind
        switch word {
        case "connect":
            guard rest.count == 1, let connection = Int(rest[rest.startIndex]), connection == connectsSeen + 1,
                  connection <= connections.count else {
                throw VectorParseError(line: number, .badEvent("expected 'connect \(connectsSeen + 1)' of a connection in the header"))
            }
            connectsSeen = connection
            kind = .connect(number: connection)
        case "tick":
            let due = Set(rest.map(String.init))
            guard due.isSubset(of: ["sender", "receiver"]), due.count == rest.count else {
                throw VectorParseError(line: number, .badEvent("a tick names only 'sender' and/or 'receiver'"))
            }
            kind = .tick(senderDue: due.contains("sender"), receiverDue: due.contains("receiver"))
        case "cut":
            guard rest.isEmpty else { throw VectorParseError(line: number, .badEvent("'cut' takes nothing")) }
            kind = .cut
        default:
            guard let route = WireVector.Route(rawValue: String(word)) else {
                throw VectorParseError(line: number, .badEvent("unknown event '\(word)'"))
            }
            guard rest.count == 1, let bytes = Hex.decode(rest[rest.startIndex]), !bytes.isEmpty else {
                throw VectorParseError(line: number, .badEvent("a datagram is one non-empty hex string"))
            }
            kind = .datagram(route, bytes)
        }
        guard connectsSeen > 0 else { throw VectorParseError(line: number, .badEvent("the log starts with 'connect 1'")) }
        events.append(WireVector.Event(time: time, kind: kind))
    }

    /// `SECONDS.NANOSECONDS` with exactly nine decimals.
    private static func time(_ text: Substring) -> Instant? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[1].count == 9, parts[1].allSatisfy(\.isASCII),
              let seconds = UInt64(parts[0]), let nanoseconds = UInt64(parts[1]) else { return nil }
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow, scaled <= .max - nanoseconds else { return nil }
        return Instant(nanoseconds: scaled + nanoseconds)
    }
}

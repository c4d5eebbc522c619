/// Why a vector file could not be read, and where.
public struct VectorParseError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Reason: Equatable, Sendable {
        /// The `format:` line is missing, or names another format.
        case wrongFormat
        case unknownKey(String)
        /// A key that may appear once appears again.
        case repeatedKey(String)
        /// A required key (or a `key=value` field of a line) is absent.
        case missingKey(String)
        case badValue(key: String, detail: String)
        /// A header line after the first log line.
        case headerAfterLog
        case badEvent(String)
        /// A log line earlier than the one before it.
        case timeGoesBack
    }

    /// 1-based line number; 0 when the problem is the file as a whole (a missing key).
    public let line: Int
    public let reason: Reason

    public init(line: Int, _ reason: Reason) {
        self.line = line
        self.reason = reason
    }

    public var description: String {
        let place = line == 0 ? "vector" : "line \(line)"
        switch reason {
        case .wrongFormat: return "\(place): expected 'format: \(WireVector.formatLine)' before any other key"
        case .unknownKey(let key): return "\(place): unknown key '\(key)'"
        case .repeatedKey(let key): return "\(place): '\(key)' given twice"
        case .missingKey(let key): return "\(place): '\(key)' is missing"
        case .badValue(let key, let detail): return "\(place): '\(key)': \(detail)"
        case .headerAfterLog: return "\(place): header line after the log has begun"
        case .badEvent(let detail): return "\(place): \(detail)"
        case .timeGoesBack: return "\(place): time goes back"
        }
    }
}

import Testing
import WireVectors

/// Parse failures name the line and the problem, so a hand-written vector is quick to fix.
@Suite struct VectorParserTests {
    static let small: String = VectorCorpus.files.files.first { $0.name == "small-file.vec" }?.text ?? ""

    /// `small` with line `number` (1-based) replaced by `replacement`.
    static func replacing(line number: Int, with replacement: String) -> String {
        var lines = small.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        lines[number - 1] = replacement
        return lines.joined(separator: "\n")
    }

    static func lineNumber(startingWith prefix: String) -> Int {
        (small.split(separator: "\n", omittingEmptySubsequences: false).firstIndex { $0.hasPrefix(prefix) } ?? -1) + 1
    }

    static func error(in text: String) -> VectorParseError? {
        do {
            _ = try WireVector(parsing: text)
            return nil
        } catch {
            return error
        }
    }

    @Test func theSampleParses() throws {
        #expect(!Self.small.isEmpty)
        _ = try WireVector(parsing: Self.small)
    }

    @Test func badHexNamesItsLine() {
        let line = Self.lineNumber(startingWith: "sender-secret:")
        #expect(Self.error(in: Self.replacing(line: line, with: "sender-secret: 12zz")) ==
            VectorParseError(line: line, .badValue(key: "sender-secret", detail: "not hex")))
    }

    @Test func aShortKeyNamesItsLength() {
        let line = Self.lineNumber(startingWith: "receiver-public:")
        #expect(Self.error(in: Self.replacing(line: line, with: "receiver-public: 0102")) ==
            VectorParseError(line: line, .badValue(key: "receiver-public", detail: "2 bytes, expected 32")))
    }

    @Test func unknownAndRepeatedKeys() {
        let line = Self.lineNumber(startingWith: "expect:")
        #expect(Self.error(in: Self.replacing(line: line, with: "expected: success")) == VectorParseError(line: line, .unknownKey("expected")))
        let session = Self.lineNumber(startingWith: "session:")
        let repeated = Self.replacing(line: session + 1, with: Self.small.split(separator: "\n")[session - 1] + "")
        #expect(Self.error(in: repeated) == VectorParseError(line: session + 1, .repeatedKey("session")))
    }

    @Test func aMissingFieldOrKey() {
        let line = Self.lineNumber(startingWith: "link:")
        #expect(Self.error(in: Self.replacing(line: line, with: "link: window=256")) ==
            VectorParseError(line: line, .missingKey("link ack-every")))
        let expect = Self.lineNumber(startingWith: "expect:")
        #expect(Self.error(in: Self.replacing(line: expect, with: "# no expectation")) == VectorParseError(line: 0, .missingKey("expect")))
    }

    @Test func aFailureNeedsItsSide() {
        let line = Self.lineNumber(startingWith: "expect:")
        #expect(Self.error(in: Self.replacing(line: line, with: "expect: integrity")) == VectorParseError(line: 0, .missingKey("raised-by")))
    }

    @Test func logLines() {
        let first = Self.lineNumber(startingWith: "t=0.000000000 S>R")
        #expect(Self.error(in: Self.replacing(line: first, with: "t=0.000000000 S>X 00")) ==
            VectorParseError(line: first, .badEvent("unknown event 'S>X'")))
        #expect(Self.error(in: Self.replacing(line: first, with: "t=0.5 S>R 00"))?.line == first)
        #expect(Self.error(in: Self.replacing(line: first, with: "t=0.000000000 S>R 0")) ==
            VectorParseError(line: first, .badEvent("a datagram is one non-empty hex string")))
        #expect(Self.error(in: Self.replacing(line: first, with: "transfer-id: 11111111111111111111111111111111")) ==
            VectorParseError(line: first, .headerAfterLog))
        let tick = Self.lineNumber(startingWith: "t=0.020000000 tick")
        #expect(Self.error(in: Self.replacing(line: tick + 1, with: "t=0.010000000 cut")) == VectorParseError(line: tick + 1, .timeGoesBack))
        #expect(Self.error(in: Self.replacing(line: tick, with: "t=0.020000000 tick everyone")) ==
            VectorParseError(line: tick, .badEvent("a tick names only 'sender' and/or 'receiver'")))
    }

    @Test func theFormatLineComesFirst() {
        let line = Self.lineNumber(startingWith: "format:")
        #expect(Self.error(in: Self.replacing(line: line, with: "format: something else")) == VectorParseError(line: line, .wrongFormat))
        #expect(Self.error(in: "expect: success\n") == VectorParseError(line: 1, .wrongFormat))
    }
}

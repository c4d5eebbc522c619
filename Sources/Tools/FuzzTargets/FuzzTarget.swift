/// One fuzz target: a function of arbitrary bytes that feeds them to a parser or decoder that sees
/// peer- or user-controlled input, then checks invariants beyond "no crash".
///
/// A target returns normally for every input the code handles correctly, including by refusing it.
/// A broken invariant traps (`require`), so libFuzzer reports the input as a crash and
/// `swift test` fails when a corpus file replays it. Targets are deterministic: fixed keys, fixed
/// ephemerals, a hand-driven clock.
public struct FuzzTarget: Sendable {
    /// The name used on the command line and as the corpus folder (`Tests/Fuzz/corpus/<name>/`).
    public let name: String
    /// One line: what it feeds and to what.
    public let summary: String
    private let body: @Sendable ([UInt8]) -> Void
    private let makeSeeds: @Sendable () -> [FuzzSeed]

    init(name: String, summary: String, run: @escaping @Sendable ([UInt8]) -> Void,
         seeds: @escaping @Sendable () -> [FuzzSeed]) {
        self.name = name
        self.summary = summary
        self.body = run
        self.makeSeeds = seeds
    }

    /// Runs one input. Traps if an invariant breaks.
    public func run(_ input: [UInt8]) { body(input) }

    /// The seed corpus: real messages produced by the code, in this target's input format.
    public func seeds() -> [FuzzSeed] { makeSeeds() }
}

/// One seed-corpus file.
public struct FuzzSeed: Sendable, Equatable {
    /// File name inside the target's corpus folder.
    public let name: String
    public let bytes: [UInt8]

    public init(_ name: String, _ bytes: [UInt8]) {
        self.name = name
        self.bytes = bytes
    }
}

/// Every target, in the order the runner uses.
public enum FuzzTargets {
    public static let all: [FuzzTarget] = [
        frameTarget,
        linkTarget,
        handshakeResponderTarget,
        handshakeInitiatorTarget,
        pairingResponderTarget,
        receiverSessionTarget,
        recordTarget,
        transferMessageTarget,
        keyTextTarget,
        dbusMessageTarget,
    ]

    public static func named(_ name: String) -> FuzzTarget? {
        all.first { $0.name == name }
    }
}

/// An invariant of a fuzz target. A violation must crash, so that libFuzzer reports it.
func require(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
             file: StaticString = #fileID, line: UInt = #line) {
    if !condition() { fatalError("fuzz invariant violated: \(message())", file: file, line: line) }
}

/// Reads a structured input (lengths, selectors, chunks) out of the fuzzer's bytes. Running out of
/// bytes is never an error: reads past the end give zeros or short chunks, so every input means
/// something.
struct FuzzInput {
    private(set) var rest: ArraySlice<UInt8>

    init(_ bytes: [UInt8]) { rest = bytes[...] }

    var isEmpty: Bool { rest.isEmpty }

    mutating func byte() -> UInt8 {
        rest.popFirst() ?? 0
    }

    mutating func uint16() -> UInt16 {
        UInt16(byte()) << 8 | UInt16(byte())
    }

    /// Up to `count` bytes.
    mutating func take(_ count: Int) -> [UInt8] {
        let piece = rest.prefix(max(count, 0))
        rest = rest.dropFirst(piece.count)
        return Array(piece)
    }

    /// A chunk with a one-byte length in front.
    mutating func chunk() -> [UInt8] { take(Int(byte())) }

    /// A chunk with a two-byte (big-endian) length in front.
    mutating func chunk16() -> [UInt8] { take(Int(uint16())) }

    /// Everything left.
    mutating func remaining() -> [UInt8] {
        defer { rest = [] }
        return Array(rest)
    }
}

/// Builds structured inputs for seeds: the inverse of `FuzzInput`.
struct FuzzInputBuilder {
    private(set) var bytes: [UInt8] = []

    mutating func byte(_ value: UInt8) { bytes.append(value) }

    mutating func uint16(_ value: Int) {
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
        bytes.append(UInt8(truncatingIfNeeded: value))
    }

    mutating func raw(_ data: [UInt8]) { bytes += data }

    /// A chunk with a one-byte length (at most 255 bytes).
    mutating func chunk(_ data: [UInt8]) {
        let piece = data.prefix(255)
        byte(UInt8(piece.count))
        bytes += piece
    }

    /// A chunk with a two-byte length (at most 65535 bytes).
    mutating func chunk16(_ data: [UInt8]) {
        let piece = data.prefix(65535)
        uint16(piece.count)
        bytes += piece
    }
}

import Testing
@testable import Transfer

let sampleID = TransferID(bytes: Array(0..<16))!

let sampleMessages: [TransferMessage] = [
    .offer(.init(id: sampleID, size: 1234, name: "report.pdf")),
    .offer(.init(id: sampleID, size: nil, name: "stream")),
    .offer(.init(id: sampleID, size: 0, name: String(repeating: "é", count: 127))),
    .accept(id: sampleID, offset: 99),
    .data([1]),
    .data(Array(repeating: 7, count: TransferConstants.maxDataPerRecord)),
    .ack(id: sampleID, received: 1 << 40),
    .done(id: sampleID, hash: Array(repeating: 0xAB, count: 32)),
    .confirm(id: sampleID, status: .saved, storedName: "report.1.pdf"),
    .confirm(id: sampleID, status: .hashMismatch, storedName: ""),
    .reject(id: sampleID, reason: .badName),
    .bye,
    .hello([]),
    .hello(.compression),
    .hello(TransferExtensions(rawValue: 0x8000_0001)),
    .zdata(originalSize: 1, frame: [0x28]),
    .folder(id: sampleID, tree: sampleID, path: Array("photos".utf8)),
    .folder(id: sampleID, tree: sampleID, path: []),
    .entry(.init(id: sampleID, tree: sampleID, size: 9, executable: true, path: Array("photos/a/b.jpg".utf8))),
    .entry(.init(id: sampleID, tree: sampleID, size: nil, executable: false, path: Array(repeating: 0x61, count: 1024))),
    .commit(tree: sampleID),
    .pending,
    .busy(retryAfterSeconds: 1, ahead: 0),
    .busy(retryAfterSeconds: TransferConstants.maxBusyRetryAfter, ahead: 255),
    .notTrusted,
    .reject(id: sampleID, reason: .notApproved),
    .batch([.data([1, 2]), .done(id: sampleID, hash: Array(repeating: 1, count: 32))]),
    .batch([.confirm(id: sampleID, status: .saved, storedName: "x"), .accept(id: sampleID, offset: 0), .ack(id: sampleID, received: 9)]),
    .zdata(originalSize: TransferConstants.maxCompressedChunk, frame: Array(repeating: 3, count: TransferConstants.maxCompressedChunk)),
]

@Test(arguments: sampleMessages)
func messageRoundTrips(_ message: TransferMessage) throws {
    let bytes = message.encoded()
    #expect(try TransferMessage(decoding: bytes) == message)
}

@Test(arguments: sampleMessages)
func everyTruncationIsATypedError(_ message: TransferMessage) {
    let bytes = message.encoded()
    for length in 0..<bytes.count {
        if case .data = message, length >= 2 { continue }   // a shorter data message is still valid
        if case .zdata = message, length >= 4 { continue }  // so is a shorter zdata frame
        if case .batch = message { continue }                // a batch cut between messages is a shorter batch
        #expect(throws: TransferMessageError.self) { try TransferMessage(decoding: bytes.prefix(length)) }
    }
}

@Test(arguments: sampleMessages.filter { if case .data = $0 { false } else if case .zdata = $0 { false } else if case .batch = $0 { false } else { true } })
func trailingBytesAreRefused(_ message: TransferMessage) {
    #expect(throws: TransferMessageError.trailingBytes) { try TransferMessage(decoding: message.encoded() + [0]) }
}

@Test func malformedMessagesGiveTypedErrors() {
    let cases: [([UInt8], TransferMessageError)] = [
        ([0x00], .unknownType),
        ([0x12], .unknownType),
        ([0x11, 0], .trailingBytes),
        ([0x0E, 0, 1, 0x11], .badField),
        ([0x10], .truncated),
        ([0x10, 0, 5], .truncated),
        ([0x10, 0, 0, 0], .badField),
        ([0x10, 0x0E, 0x11, 0], .badField),
        ([0x10, 0, 5, 0, 0], .trailingBytes),
        ([0x0E, 0, 4, 0x10, 0, 5, 0], .badField),
        ([0x0E], .emptyBatch),
        ([0x0E, 0, 1, 0x08], .badField),
        ([0x0E, 0, 5, 0x09, 0, 0, 0, 1], .badField),
        ([0x0E, 0, 1, 0x0E], .badField),
        ([0x0E, 0, 1, 0x0F], .badField),
        ([0x0E, 0, 0], .truncated),
        ([0x0E, 0, 2, 0x03, 1, 0, 1, 0x0E], .badField),
        ([0x0E, 0, 3, 0x08], .truncated),
        ([0x0B], .truncated),
        ([0x0C] + Array(repeating: 0, count: 40) + [2, 0, 1, 0x61], .badField),
        ([0x0B] + Array(repeating: 0, count: 32) + [0x04, 0x01], .badField),
        ([0x09], .truncated),
        ([0x09, 0, 0, 0, 1, 0], .trailingBytes),
        ([0x03], .emptyData),
        ([0x0A, 0x00, 0x10], .emptyData),
        ([0x0A, 0x00, 0x00, 0x28], .badField),
        ([0x0A, 0x40, 0x01, 0x28], .badField),
        ([0x0A, 0x00, 0x10] + Array(repeating: 1, count: TransferConstants.maxCompressedChunk + 1), .dataTooLarge),
        ([0x03] + Array(repeating: 1, count: TransferConstants.maxDataPerRecord + 1), .dataTooLarge),
        ([0x06] + Array(0..<16) + [0, 2, 0xC3, 0x28], .badName),
        ([0x06] + Array(0..<16) + [9, 0], .badField),
        ([0x07] + Array(0..<16) + [0], .badField),
    ]
    for (bytes, expected) in cases {
        #expect(throws: expected) { try TransferMessage(decoding: bytes) }
    }
}

/// A bad name in an offer is the receiver's call for that one file (it rejects it), not a
/// malformed message that would end the session: any name bytes decode, and encode back exactly.
@Test func offersCarryAnyNameBytes() throws {
    for name: [UInt8] in [[], [0xC3, 0x28], Array("../x".utf8), [0x1B, 0x5B, 0x32, 0x4A]] {
        let bytes: [UInt8] = [0x01] + Array(0..<16) + Array(repeating: 0, count: 8) + [UInt8(name.count)] + name
        let message = try TransferMessage(decoding: bytes)
        guard case .offer(let offer) = message else {
            Issue.record("not an offer: \(message)")
            continue
        }
        #expect(offer.nameBytes == name)
        #expect(offer.name == String(validating: name, as: UTF8.self))
        #expect(message.encoded() == bytes)
    }
}

@Test func randomGarbageNeverCrashes() {
    var state: UInt64 = 42
    func next() -> UInt64 { state = state &* 6364136223846793005 &+ 1442695040888963407; return state >> 33 }
    var parsed = 0
    for _ in 0..<20_000 {
        let length = Int(next() % 80)
        let bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: next()) }
        if (try? TransferMessage(decoding: bytes)) != nil { parsed += 1 }
    }
    // Some random inputs are valid data messages; most are not. Either way, nothing crashed.
    #expect(parsed < 20_000)
}

@Test(arguments: [
    ("report.pdf", "report.pdf"),
    ("../../etc/passwd", "passwd"),
    ("/absolute/path/x.txt", "x.txt"),
    ("dir\\win.txt", "win.txt"),
    ("..", nil),
    ("../..", nil),
    (".hidden", "hidden"),
    ("...", nil),
    ("a\u{0}b", "a_b"),
    ("line\nbreak", "line_break"),
    ("  spaced  ", "spaced"),
    ("bell\u{7}", "bell_"),
    ("/", nil),
    ("", nil),
    (". .x", "x"),
    (". .", nil),
    (" . \u{2003}. .hidden", "hidden"),
    (".\u{301}x", "\u{301}x"),
] as [(String, String?)])
func fileNamesAreReducedToSafeBaseNames(_ proposed: String, _ expected: String?) {
    #expect(safeFileName(proposed) == expected)
}

@Test func longNamesAreCutAtACharacterBoundary() throws {
    let name = try #require(safeFileName(String(repeating: "ü", count: 300)))
    #expect(name.utf8.count <= TransferConstants.maxNameLength)
    #expect(name.utf8.count >= TransferConstants.maxNameLength - 1)
    #expect(name.allSatisfy { $0 == "ü" })
}

/// A handshake payload is an optional `hello`, then one message that runs to the end.
@Test func handshakePayloadsCarryAnOptionalHelloFirst() throws {
    let offer = TransferMessage.offer(.init(id: sampleID, size: 5, name: "a"))
    for messages: [TransferMessage] in [[offer], [.hello(.compression), offer], [.hello([]), .accept(id: sampleID, offset: 0)]] {
        var bytes: [UInt8] = []
        HandshakePayload.encode(messages, into: &bytes)
        #expect(try HandshakePayload.decode(bytes) == messages)
        #expect(try HandshakePayload.decode(bytes[...]) == messages)
    }
    // A hello alone is one message; a truncated hello before an offer is not a hello.
    #expect(try HandshakePayload.decode([0x09, 0, 0, 0, 1]) == [.hello(.compression)])
    #expect(throws: TransferMessageError.self) { try HandshakePayload.decode([0x09, 0, 0, 1]) }
    #expect(throws: TransferMessageError.self) { try HandshakePayload.decode([0x09, 0, 0, 0, 1, 0x00]) }
}

@Test(arguments: sampleMessages)
func wireLengthIsTheEncodedLength(_ message: TransferMessage) {
    #expect(message.wireLength == message.encoded().count)
}

/// Packing keeps the order, never exceeds the limit with several messages, and leaves alone what
/// cannot share a record.
@Test func packingKeepsOrderAndSize() {
    let small: [TransferMessage] = (0..<50).map { _ in .ack(id: sampleID, received: 1) } + [.bye]
    let packed = TransferMessage.packed(small, limit: 200)
    var flat: [TransferMessage] = []
    for message in packed {
        if case .batch(let inner) = message {
            flat += inner
            #expect(message.wireLength <= 200)
        } else {
            flat.append(message)
        }
    }
    #expect(flat == small)
    #expect(packed.last == .bye)
    #expect(TransferMessage.packed([.data(Array(repeating: 1, count: 300))], limit: 200) == [.data(Array(repeating: 1, count: 300))])
}

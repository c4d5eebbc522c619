import Transfer

/// `transfer-message`: one record plaintext into `TransferMessage(decoding:)`, the parser of
/// everything the peer says once the handshake is done.
///
/// Invariants:
/// - a decoded message encodes back to exactly the input (one encoding per message);
/// - fields are in range: names at most 255 bytes (UTF-8 in a confirm; any bytes in an offer, which
///   the receiver judges), `data` 1...4096 bytes, `zdata` frames 1...16384 bytes standing for
///   1...16384 bytes, hashes 32 bytes, ids 16 bytes;
/// - decoding from a collection that is not an Array (a slice at an offset) gives the same result;
/// - a batch whose first message is a batch is refused (`badField`), without parsing the inner one.
let transferMessageTarget = FuzzTarget(
    name: "transfer-message",
    summary: "one record plaintext into TransferMessage(decoding:); round trip through encode",
    run: runTransferMessage,
    seeds: transferMessageSeeds)

private func runTransferMessage(_ bytes: [UInt8]) {
    let decoded = Result { () throws(TransferMessageError) in try TransferMessage(decoding: bytes) }
    let shifted = ([0x00] + bytes)[1...]
    let decodedShifted = Result { () throws(TransferMessageError) in try TransferMessage(decoding: shifted) }
    require(decoded == decodedShifted, "slice offset changed the result")
    // A batch never nests: the type byte of its first message refuses it before that message is
    // parsed, whatever follows (a record of nested batches once went 21,000 levels deep).
    if bytes.count >= 4, bytes[0] == TransferMessage.Kind.batch.rawValue, bytes[3] == TransferMessage.Kind.batch.rawValue,
       (1...(bytes.count - 3)).contains(Int(bytes[1]) << 8 | Int(bytes[2])) {
        require(decoded == .failure(.badField), "a batch in a batch gave \(decoded)")
    }
    guard case .success(let message) = decoded else { return }

    switch message {
    case .offer(let offer):
        require(offer.nameBytes.count <= TransferConstants.maxNameLength, "offer name of \(offer.nameBytes.count) bytes")
        require(offer.id.bytes.count == TransferConstants.idLength, "id of \(offer.id.bytes.count) bytes")
        require(offer.size != TransferConstants.unknownSize, "unknown size not mapped to nil")
    case .data(let data):
        require(!data.isEmpty && data.count <= TransferConstants.maxDataPerRecord, "data of \(data.count) bytes")
    case .done(let id, let hash):
        require(hash.count == TransferConstants.hashLength && id.bytes.count == TransferConstants.idLength, "done field sizes")
    case .confirm(_, _, let storedName):
        require(storedName.utf8.count <= TransferConstants.maxNameLength, "stored name of \(storedName.utf8.count) bytes")
    case .zdata(let originalSize, let frame):
        require((1...TransferConstants.maxCompressedChunk).contains(originalSize), "zdata standing for \(originalSize) bytes")
        require(!frame.isEmpty && frame.count <= TransferConstants.maxCompressedChunk, "zdata frame of \(frame.count) bytes")
    case .folder(_, _, let path):
        require(path.count <= TransferConstants.maxPathLength, "folder path of \(path.count) bytes")
    case .entry(let entry):
        require(entry.path.count <= TransferConstants.maxPathLength, "entry path of \(entry.path.count) bytes")
        require(entry.size != TransferConstants.unknownSize, "unknown size not mapped to nil")
    case .batch(let messages):
        require(!messages.isEmpty && messages.allSatisfy(\.batchable), "batch of \(messages.map(\.kind))")
    case .busy(let retryAfter, _):
        require((1...TransferConstants.maxBusyRetryAfter).contains(retryAfter), "busy asking to wait \(retryAfter) s")
    case .accept, .ack, .reject, .bye, .hello, .commit, .pending, .notTrusted:
        break
    }
    require(message.encoded() == bytes, "decode/encode round trip changed the bytes")
    require(message.wireLength == bytes.count, "wireLength \(message.wireLength) for \(bytes.count) bytes")
}

private func transferMessageSeeds() -> [FuzzSeed] {
    let id = TransferID(halves: (0x1122_3344_5566_7788, 0x99AA_BBCC_DDEE_FF00))
    let messages: [(String, TransferMessage)] = [
        ("offer", .offer(.init(id: id, size: 1_048_576, name: "holiday photo.jpg"))),
        ("offer-stream", .offer(.init(id: id, size: nil, name: "stdin"))),
        ("offer-unicode-name", .offer(.init(id: id, size: 0, name: "résumé – 日本語.txt"))),
        ("offer-long-name", .offer(.init(id: id, size: 9, name: String(repeating: "n", count: 255)))),
        ("accept", .accept(id: id, offset: 0)),
        ("accept-resume", .accept(id: id, offset: 262_144)),
        ("data", .data(Array("some file bytes".utf8))),
        ("data-max", .data([UInt8](repeating: 0x5A, count: TransferConstants.maxDataPerRecord))),
        ("ack", .ack(id: id, received: 32_768)),
        ("done", .done(id: id, hash: (0..<32).map { UInt8($0) })),
        ("confirm-saved", .confirm(id: id, status: .saved, storedName: "holiday photo.1.jpg")),
        ("confirm-mismatch", .confirm(id: id, status: .hashMismatch, storedName: "")),
        ("reject", .reject(id: id, reason: .tooLarge)),
        ("bye", .bye),
        ("hello", .hello(.compression)),
        ("hello-unknown-bits", .hello(TransferExtensions(rawValue: 0xFFFF_FFFF))),
        ("zdata", .zdata(originalSize: 16_384, frame: [0x28, 0xB5, 0x2F, 0xFD, 0x00, 0x01])),
        ("folder", .folder(id: id, tree: id, path: Array("photos/2024".utf8))),
        ("entry", .entry(.init(id: id, tree: id, size: 1234, executable: true, path: Array("photos/2024/beach.jpg".utf8)))),
        ("commit", .commit(tree: id)),
        ("pending", .pending),
        ("busy", .busy(retryAfterSeconds: 5, ahead: 2)),
        ("batch", .batch([.entry(.init(id: id, tree: id, size: 3, executable: false, path: Array("t/a".utf8))), .data([1, 2, 3]),
                          .done(id: id, hash: Array(repeating: 7, count: 32))])),
    ]
    return messages.map { FuzzSeed($0.0, $0.1.encoded()) } + [FuzzSeed("batch-nested", nestedBatches(within: 4096))]
}

/// Batches nested as deep as fit in `limit` bytes around one `data` byte: malformed at the first
/// level, and what mutations grow into the deep nesting of issue 20.
func nestedBatches(within limit: Int) -> [UInt8] {
    let depth = (limit - 2) / 3
    var bytes: [UInt8] = []
    for level in 0..<depth {
        let length = 3 * (depth - 1 - level) + 2
        bytes += [TransferMessage.Kind.batch.rawValue, UInt8(length >> 8), UInt8(length & 0xFF)]
    }
    return bytes + [TransferMessage.Kind.data.rawValue, 0x2A]
}

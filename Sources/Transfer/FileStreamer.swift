import Pipeline
/// Streams the file being sent: reads it from where the receiver said, hashes each byte once,
/// sends its bytes through the `ChunkEncoder`, and ends it with `done` and the hash. Counts the
/// file bytes sent and the bytes that carried them.
struct FileStreamer {
    private var encoder: ChunkEncoder
    private var dataLimit = TransferConstants.maxDataPerRecord
    /// File bytes handed to the link in `data` and `zdata`, and the bytes that carried them.
    private(set) var fileBytesSent: UInt64 = 0
    private(set) var payloadBytesSent: UInt64 = 0

    init(encoder: ChunkEncoder) {
        self.encoder = encoder
    }

    /// File bytes per `data` message (1...`maxDataPerRecord`).
    var dataPerRecord: Int {
        get { dataLimit }
        set { dataLimit = min(max(newValue, 1), TransferConstants.maxDataPerRecord) }
    }

    var compresses: Bool { encoder.compresses }

    /// A file starts, or resumes, here: the receiver's history starts afresh, so does ours.
    mutating func restart() { encoder.reset() }

    /// The link is gone: what was read and not sent is read again after the next `accept`.
    mutating func connectionLost() { encoder.dropLeftover() }

    /// The next message of `file`: its next bytes, or its `done` once every byte went.
    /// `compressing`: compression is granted on this connection.
    mutating func next(for file: inout Outgoing, compressing: Bool) throws(TransferError) -> TransferMessage {
        if let bytes = encoder.nextLeftover(limit: dataLimit) {
            return sent(.data(bytes), fileBytes: bytes.count, of: &file)
        }
        let source = file.source
        try file.hash.catchUp(to: file.nextOffset, from: source)
        var count = encoder.chunkSize(limit: dataLimit, compressing: compressing)
        if let size = source.size {
            count = Int(min(UInt64(count), size &- min(size, file.nextOffset)))
        }
        let bytes: [UInt8]
        do {
            bytes = count > 0 ? try source.read(at: file.nextOffset, count: count) : []
        } catch {
            throw .sourceFailed(FileSourceError(.unreadable, name: source.name, cause: StorageError(adapting: error)))
        }
        guard bytes.count <= count else { throw .sourceFailed(FileSourceError(.readTooMuch, name: source.name)) }
        if bytes.isEmpty { return try done(&file) }
        file.hash.absorb(bytes, at: file.nextOffset)
        file.highestSent = max(file.highestSent, file.nextOffset + UInt64(bytes.count))
        let (message, fileBytes) = encoder.encode(bytes, limit: dataLimit, compressing: compressing)
        return sent(message, fileBytes: fileBytes, of: &file)
    }

    /// The end of `file`: every byte of it went.
    private func done(_ file: inout Outgoing) throws(TransferError) -> TransferMessage {
        if let size = file.source.size, file.nextOffset != size {
            throw .sourceFailed(FileSourceError(.shrank, name: file.source.name))
        }
        guard let hash = file.hash.finish(at: file.nextOffset) else {
            throw .sourceFailed(FileSourceError(.hashOutOfStep, name: file.source.name))
        }
        file.link.doneSent = true
        return .done(id: file.id, hash: hash)
    }

    /// Counts `message`, which carries the next `fileBytes` bytes of `file`, as sent.
    private mutating func sent(_ message: TransferMessage, fileBytes: Int, of file: inout Outgoing) -> TransferMessage {
        file.nextOffset += UInt64(fileBytes)
        fileBytesSent += UInt64(fileBytes)
        switch message {
        case .data(let bytes):
            payloadBytesSent += UInt64(bytes.count)
            file.airBytes += UInt64(bytes.count)
        case .zdata(_, let frame):
            payloadBytesSent += UInt64(frame.count)
            file.airBytes += UInt64(frame.count)
        default: break
        }
        return message
    }
}

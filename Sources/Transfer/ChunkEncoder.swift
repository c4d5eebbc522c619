/// The sender's chunk transform: cuts the bytes read from a file into `data` messages, or, while
/// compression is granted, reads larger chunks and sends each as one `zdata` when the compressor
/// finds it worth it, else raw in `data` messages (the rest of it waits as a leftover). Every
/// chunk joins the compressor's history either way, as on the receiver's side (`ChunkDecoder`).
struct ChunkEncoder {
    private var compressor: (any ChunkCompressor)?
    /// Bytes read (and hashed) that the compressor judged not worth compressing, still to go raw.
    private var leftover: [UInt8] = []

    init(compressor: (any ChunkCompressor)?) {
        self.compressor = compressor
    }

    /// Whether this sender can compress (it may ask for `compression`).
    var compresses: Bool { compressor != nil }

    /// File bytes to read for the next chunk; `compressing`: compression is granted.
    func chunkSize(limit: Int, compressing: Bool) -> Int {
        compressing && compresses ? TransferConstants.maxCompressedChunk : limit
    }

    /// Forgets the history and any leftover: a new file, or a resume point.
    mutating func reset() {
        leftover = []
        compressor?.reset()
    }

    /// Forgets the leftover only: the link is gone, and the next `accept` says where to go on.
    mutating func dropLeftover() { leftover = [] }

    /// The next at most `limit` leftover bytes, as a `data` message; nil if none are left.
    mutating func nextLeftover(limit: Int) -> [UInt8]? {
        guard !leftover.isEmpty else { return nil }
        let bytes = Array(leftover.prefix(limit))
        leftover.removeFirst(bytes.count)
        return bytes
    }

    /// The message that carries `chunk` (at most `chunkSize` bytes), and how many of its bytes
    /// it carries; the rest of a chunk that goes raw becomes the leftover.
    mutating func encode(_ chunk: [UInt8], limit: Int, compressing: Bool) -> (TransferMessage, fileBytes: Int) {
        guard compressing, compresses else { return (.data(chunk), chunk.count) }
        if let frame = compressor?.compress(chunk) {
            return (.zdata(originalSize: chunk.count, frame: frame), chunk.count)
        }
        // Not worth compressing: the chunk goes raw, `limit` bytes per message.
        leftover = Array(chunk.dropFirst(limit))
        let first = Array(chunk.prefix(limit))
        return (.data(first), first.count)
    }
}

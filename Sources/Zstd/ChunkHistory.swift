/// The newest original bytes of one file on one connection, at most `limit` of them: what the next
/// frame may reference. Sender and receiver each keep one and append every chunk, compressed or
/// raw, so the two stay byte for byte the same.
struct ChunkHistory {
    let limit: Int
    private(set) var bytes: [UInt8] = []

    init(limit: Int) {
        precondition(limit >= 0, "a history limit is a byte count")
        self.limit = limit
        bytes.reserveCapacity(limit)
    }

    /// Adds `chunk` at the end and forgets the oldest bytes beyond `limit`.
    mutating func append(_ chunk: [UInt8]) {
        if chunk.count >= limit {
            bytes.removeAll(keepingCapacity: true)
            bytes.append(contentsOf: chunk.suffix(limit))
            return
        }
        let excess = bytes.count + chunk.count - limit
        if excess > 0 { bytes.removeFirst(excess) }
        bytes.append(contentsOf: chunk)
    }

    mutating func reset() {
        bytes.removeAll(keepingCapacity: true)
    }
}

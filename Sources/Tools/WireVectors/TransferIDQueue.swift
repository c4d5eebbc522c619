import Transfer

/// The vector's transfer ids, handed out in order. Drawing more than it lists is recorded, and
/// the replay fails on it.
final class TransferIDQueue {
    private var remaining: ArraySlice<[UInt8]>
    private(set) var overdrawn = false

    init(_ ids: [[UInt8]]) { remaining = ids[...] }

    func next() -> TransferID {
        if let bytes = remaining.popFirst(), let id = TransferID(bytes: bytes) { return id }
        overdrawn = true
        return TransferID(halves: (0, 0))
    }
}

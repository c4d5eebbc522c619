/// What a receiver grants (docs/protocol.md §8): the extensions it supports, and those granted
/// on the current connection, which decide what the sender may send on it.
struct ExtensionGrant {
    /// What this receiver lists in its extensions characteristic.
    let supported: TransferExtensions
    /// What the sender of the current connection asked for and was granted.
    private(set) var granted: TransferExtensions = []

    init(supported: TransferExtensions) {
        self.supported = supported
    }

    /// What this receiver grants a sender that asks for `asked`.
    func granting(_ asked: TransferExtensions) -> TransferExtensions { asked.intersection(supported) }

    /// A new connection that opens with `opening`: grants what its `hello` asks for, if it has
    /// one, and returns the `hello` that answers it.
    mutating func begin(opening: [TransferMessage]) -> TransferMessage? {
        guard case .hello(let asked) = opening.first else {
            granted = []
            return nil
        }
        granted = granting(asked)
        return .hello(granted)
    }

    /// Whether the sender may send a message of `kind` under what was granted.
    func admits(_ kind: TransferMessage.Kind) -> Bool {
        switch kind {
        case .entry, .folder, .commit: granted.contains(.folders)
        case .zdata: granted.contains(.compression)
        case .batch: granted.contains(.pipelining)
        default: true
        }
    }

    /// Whether `opening` can open a connection: one offer, after a `hello` if any; where that
    /// `hello` is granted `folders`, also any item of a folder (a resume may start there).
    func admitsOpening(_ opening: [TransferMessage]) -> Bool {
        var rest = opening[...]
        var granted: TransferExtensions = []
        if case .hello(let asked) = rest.first {
            granted = granting(asked)
            rest = rest.dropFirst()
        }
        guard rest.count == 1, let first = rest.first else { return false }
        switch first.kind {
        case .offer: return true
        case .entry, .folder, .commit: return granted.contains(.folders)
        default: return false
        }
    }
}

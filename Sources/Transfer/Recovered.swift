/// What a store found at start of what an earlier run kept: what it takes up (`found`), and how
/// many kept things it removed instead (`removed`: expired, damaged, cut short, unreadable, or left
/// without their record).
public struct Recovered<Found> {
    public var found: [Found]
    public var removed: Int

    public init(found: [Found] = [], removed: Int = 0) {
        self.found = found
        self.removed = removed
    }
}

/// What a receiver took up at start (`ReceiverLedger.recoverPartials`), for its log: partial files
/// and folders kept for their senders, and what the stores removed instead (hidden files of
/// partials, a partial and its record counting two; folders).
public struct KeptAtStart: Equatable, Sendable {
    public let kept: Int
    public let removedFiles: Int
    public let removedFolders: Int
}

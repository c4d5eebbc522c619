/// Walks what a sender sends, in order (`OutgoingItem`: files, and the folders, files and commit
/// of each tree), handing out each item once with the transfer id it goes under. A tree that will
/// not arrive (its top folder was refused, or the receiver takes no folders) is skipped, and
/// reported once.
struct FolderWalker {
    typealias Event = TransferSender.Event

    private let items: [OutgoingItem]
    private let makeID: () -> TransferID
    /// The next item never offered.
    private var next = 0
    /// Trees whose remaining items are skipped.
    private var failedTrees: Set<TransferID> = []

    init(items: [OutgoingItem], makeID: @escaping () -> TransferID) {
        self.items = items
        self.makeID = makeID
    }

    /// Whether anything is part of a tree (the sender then asks for `folders`).
    var hasFolders: Bool { items.contains { $0.tree != nil } }

    /// Every item was handed out.
    var isExhausted: Bool { next >= items.count }

    /// The next item to offer, its index and its transfer id (a commit's: its tree's id); nil if
    /// none is left. Items of a tree go only where `allowed` has `folders`.
    mutating func nextItem(allowed: TransferExtensions, events: inout [Event]) -> (index: Int, item: OutgoingItem, id: TransferID)? {
        while next < items.count {
            let index = next
            let item = items[index]
            next += 1
            if let tree = item.tree {
                if failedTrees.contains(tree) { continue }
                guard allowed.contains(.folders) else {
                    failedTrees.insert(tree)
                    events.append(.fileFailed(index: index, .foldersNotSupported))
                    continue
                }
            }
            let id: TransferID
            switch item {
            case .commit(let tree, _): id = tree
            case .file(let source): id = source.transferID ?? makeID()
            default: id = makeID()
            }
            return (index, item, id)
        }
        return nil
    }

    /// The receiver refused `item`: a refused top folder takes its tree with it.
    mutating func refused(_ item: OutgoingItem) {
        if item.opensTree, let tree = item.tree { failedTrees.insert(tree) }
    }

    /// Whether what became of `item` is news: not for the items of a tree already reported as failed.
    func reports(_ item: OutgoingItem) -> Bool {
        guard let tree = item.tree, failedTrees.contains(tree) else { return true }
        return item.opensTree
    }
}

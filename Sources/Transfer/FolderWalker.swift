/// Walks what a sender sends, in order (`OutgoingItem`: files, and the folders, files and commit
/// of each tree), handing out each item once with the transfer id it goes under. A tree that will
/// not arrive (its top folder was refused, or the receiver takes no folders) is skipped, and
/// reported once.
struct FolderWalker {
    typealias Event = TransferSender.Event

    private let items: [OutgoingItem]
    private let makeID: () -> TransferID
    private let makeHasher: () -> any ContentHasher
    /// The next item never offered.
    private var next = 0
    /// Trees whose remaining items are skipped.
    private var failedTrees: Set<TransferID> = []

    init(items: [OutgoingItem], makeID: @escaping () -> TransferID, makeHasher: @escaping () -> any ContentHasher) {
        self.items = items
        self.makeID = makeID
        self.makeHasher = makeHasher
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
            case .file(let source), .treeFile(_, _, _, let source): id = source.transferID ?? makeID()
            case .folder(let tree, let path): id = folderID(tree: tree, path: path)
            }
            return (index, item, id)
        }
        return nil
    }

    /// A `folder` item's transfer id, from its tree id and its path: a run again under the same
    /// tree id (a folder cut off part-way) offers its folders under the ids the receiver kept.
    private func folderID(tree: TransferID, path: [UInt8]) -> TransferID {
        var hasher = makeHasher()
        hasher.update(Array("blesend folder item".utf8) + tree.bytes + path)
        return TransferID(bytes: hasher.finalize().prefix(TransferConstants.idLength)) ?? makeID()
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

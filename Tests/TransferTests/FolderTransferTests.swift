import Pipeline
import TestDoubles
import Testing
@testable import Transfer

/// The items of a folder called `top`: `entries` in order, a path with bytes a file (its name the
/// path), without a folder; the top folder first and the commit last.
func treeItems(_ top: String, _ entries: [(String, [UInt8]?)], tree: UInt8 = 0xEE, executable: Set<String> = []) -> [OutgoingItem] {
    let id = TransferID(bytes: Array(repeating: tree, count: 16))!
    var items: [OutgoingItem] = [.folder(tree: id, path: Array(top.utf8))]
    for (path, bytes) in entries {
        let full = Array((top + "/" + path).utf8)
        if let bytes {
            items.append(.treeFile(tree: id, path: full, executable: executable.contains(path),
                                   source: MemoryFileSource(name: top + "/" + path, bytes: bytes)))
        } else {
            items.append(.folder(tree: id, path: full))
        }
    }
    items.append(.commit(tree: id, name: top))
    return items
}

private let sampleTree: [(String, [UInt8]?)] = [
    ("empty", nil),
    ("a", nil),
    ("a/b", nil),
    ("a/b/deep.txt", pattern(5000)),
    ("a/zero.bin", []),
    ("résumé – 日本語", nil),
    ("résumé – 日本語/ünïcödé.txt", Array("hé".utf8)),
    ("run.sh", Array("#!/bin/sh\n".utf8)),
]

@Test(arguments: [true, false])
func aFolderArrivesWholeWithEmptyFoldersAndFiles(pipelines: Bool) throws {
    let items = treeItems("photos", sampleTree, executable: ["run.sh"]) + [.file(MemoryFileSource(name: "notes.txt", bytes: [1, 2]))]
    var c = LaggingConversation(items: items, pipelines: pipelines)
    #expect(try c.runConnection())
    for case (let path, let bytes?) in sampleTree { #expect(c.store.committed["photos/" + path] == bytes, "\(path)") }
    for case (let path, nil) in sampleTree { #expect(c.store.folders.contains("photos/" + path), "\(path)") }
    #expect(c.store.folders.contains("photos"))
    #expect(c.store.committed["notes.txt"] == [1, 2])
    #expect(c.store.openTemporaries == 0 && c.store.openTrees == 0)
    #expect(c.senderEvents.contains(.folderSaved(index: items.count - 2, storedName: "photos")))
    #expect(c.receiverEvents.contains(.folderSaved(sender: "s", name: "photos", storedName: "photos", files: 4)))
    #expect(!c.senderEvents.contains { if case .fileFailed = $0 { true } else { false } })
}

@Test func aTakenTopNameGetsANumberAndNothingIsVisibleBeforeTheCommit() throws {
    let items = treeItems("docs", [("x", [7])], tree: 1) + treeItems("docs", [("y", [8])], tree: 2)
    var c = LaggingConversation(items: items, pipelines: true, lag: 1)
    // Run until the first tree's file is done but not committed: nothing under docs yet.
    _ = try c.receiver.begin(sender: "s", senderKey: [1], opening: c.sender.openingMessages(receiverOffers: c.receiver.grantable), now: .zero)
    #expect(c.store.committed.isEmpty && c.store.folders.isEmpty)
    var c2 = LaggingConversation(items: items, pipelines: true, lag: 1)
    #expect(try c2.runConnection())
    #expect(c2.store.committed["docs/x"] == [7])
    #expect(c2.store.committed["docs-1/y"] == [8])
}

@Test func aPathTakenTwiceInAFolderRefusesTheSecondAndTheRestArrives() throws {
    // ".a" and "a" reduce to the same name; the second is refused as taken.
    let items = treeItems("t", [(".a", [1]), ("a", [2]), ("b", [3])])
    var c = LaggingConversation(items: items, pipelines: true)
    #expect(try c.runConnection())
    #expect(c.store.committed["t/a"] == [1])
    #expect(c.store.committed["t/b"] == [3])
    #expect(c.senderEvents.contains(.fileFailed(index: 2, .rejected(.exists))))
    #expect(c.store.openTemporaries == 0 && c.store.openTrees == 0)
}

@Test func aReceiverWithoutFoldersRefusesTheTreeOnceAndTakesTheFiles() throws {
    let items = [OutgoingItem.file(MemoryFileSource(name: "one", bytes: [1]))] + treeItems("t", sampleTree)
        + [.file(MemoryFileSource(name: "two", bytes: [2]))]
    var c = LaggingConversation(items: items, pipelines: true, receiverTakesFolders: false)
    #expect(try c.runConnection())
    #expect(c.store.committed == ["one": [1], "two": [2]])
    let failures = c.senderEvents.filter { if case .fileFailed = $0 { true } else { false } }
    #expect(failures == [.fileFailed(index: 1, .foldersNotSupported)])
}

@Test func aRefusedTopFolderTakesItsTreeWithItQuietly() throws {
    // A top name the receiver refuses ("..."), pipelined: its entries are refused too, reported once.
    var items = treeItems("x", [("f", [1]), ("g", nil), ("g/h", [2])])
    items[0] = .folder(tree: TransferID(bytes: Array(repeating: 0xEE, count: 16))!, path: Array("...".utf8))
    items.append(.file(MemoryFileSource(name: "after", bytes: [9])))
    var c = LaggingConversation(items: items, pipelines: true)
    #expect(try c.runConnection())
    #expect(c.store.committed == ["after": [9]])
    let failures = c.senderEvents.filter { if case .fileFailed = $0 { true } else { false } }
    #expect(failures == [.fileFailed(index: 0, .rejected(.badName))])
    #expect(c.store.openTemporaries == 0 && c.store.openTrees == 0)
}

@Test(arguments: [3, 8, 14, 20])
func aFolderCutMidwayResumesAndArrivesWhole(cutAfter: Int) throws {
    let entries: [(String, [UInt8]?)] = [("a", nil)] + (0..<8).map { ("a/f\($0)", pattern(3000, seed: UInt8($0 + 1))) }
    var c = LaggingConversation(items: treeItems("cut", entries), pipelines: true, lag: 5)
    #expect(try c.runConnection(cutAfter: cutAfter) == false)
    var connections = 1
    while try !c.runConnection() {
        connections += 1
        guard connections < 5 else { Issue.record("did not finish"); return }
    }
    for case (let path, let bytes?) in entries { #expect(c.store.committed["cut/" + path] == bytes) }
    #expect(c.store.openTemporaries == 0 && c.store.openTrees == 0)
}

/// What a trusted but hostile sender can put in `folder` and `entry` messages: every bad path
/// is refused for that entry alone, nothing lands outside its folder, and a folder abandoned
/// (the sender broke the rules) leaves nothing.
@Test func hostilePathsAreRefusedOneByOne() throws {
    let store = MemoryFileStore()
    var receiver = TransferReceiver(store: store, makeHasher: { TestHasher() }, trees: store)
    let tree = TransferID(bytes: Array(repeating: 7, count: 16))!
    var n: UInt8 = 0
    func id() -> TransferID { n += 1; return TransferID(bytes: Array(repeating: n, count: 16))! }
    let opening: [TransferMessage] = [.hello(.folders), .folder(id: id(), tree: tree, path: Array("top".utf8))]
    #expect(try receiver.begin(sender: "s", senderKey: [1], opening: opening, now: .zero).last
            == .confirm(id: TransferID(bytes: Array(repeating: 1, count: 16))!, status: .saved, storedName: "top"))
    let hostile: [([UInt8], TransferMessage.RejectReason)] = [
        (Array("/etc/passwd".utf8), .badName), (Array("top/../../x".utf8), .badName), (Array("top/./x".utf8), .badName),
        (Array("top//x".utf8), .badName), (Array("top/x/".utf8), .badName), (Array("top/a\u{1B}b".utf8), .badName),
        (Array("top/a\\b".utf8), .badName), ([0x74, 0x6F, 0x70, 0x2F, 0xC3, 0x28], .badName), (Array("top/a\0b".utf8), .badName),
        (Array(("top" + String(repeating: "/d", count: 40)).utf8), .badName), (Array("other/x".utf8), .noFolder),
        (Array("topx/y".utf8), .noFolder), (Array("top".utf8), .badName),
    ]
    for (path, reason) in hostile {
        let entryID = id()
        let reply = try receiver.receive(.entry(.init(id: entryID, tree: tree, size: 3, executable: false, path: path)), now: .zero)
        #expect(reply == [.reject(id: entryID, reason: reason)], "\(String(decoding: path, as: UTF8.self))")
        // Its data and done are ignored.
        #expect(try receiver.receive(.data([1, 2, 3]), now: .zero) == [])
        #expect(try receiver.receive(.done(id: entryID, hash: []), now: .zero) == [])
    }
    // A folder of an unknown tree, an entry of an unknown tree, a commit of an unknown tree.
    let other = TransferID(bytes: Array(repeating: 9, count: 16))!
    let folderID = id()
    #expect(try receiver.receive(.folder(id: folderID, tree: other, path: Array("top/x".utf8)), now: .zero) == [.reject(id: folderID, reason: .noFolder)])
    #expect(try receiver.receive(.commit(tree: other), now: .zero) == [.reject(id: other, reason: .noFolder)])
    #expect(store.committed.isEmpty && store.folders.isEmpty)
    // A good file, then the sender breaks the rules mid-file: nothing is kept.
    let good = id()
    _ = try receiver.receive(.entry(.init(id: good, tree: tree, size: 10, executable: false, path: Array("top/ok".utf8))), now: .zero)
    #expect(throws: TransferError.moreBytesThanOffered) { try receiver.receive(.data(Array(repeating: 1, count: 11)), now: .zero) }
    receiver.abandonCurrent(because: .senderBrokeProtocol(.moreBytesThanOffered))
    #expect(receiver.openTreeCount == 0)
    #expect(store.openTemporaries == 0 && store.openTrees == 0)
    #expect(store.committed.isEmpty && store.folders.isEmpty)
}

@Test func folderMessagesNeedTheExtension() throws {
    let store = MemoryFileStore()
    var receiver = TransferReceiver(store: store, makeHasher: { TestHasher() }, trees: store)
    let tree = TransferID(bytes: Array(repeating: 7, count: 16))!
    _ = try receiver.begin(sender: "s", senderKey: [1], opening: [.offer(.init(id: sampleID, size: 0, name: "f"))], now: .zero)
    _ = try receiver.receive(.done(id: sampleID, hash: { var h = TestHasher(); return h.finalize() }()), now: .zero)
    #expect(throws: TransferError.unexpected(.folder)) { try receiver.receive(.folder(id: sampleID, tree: tree, path: Array("t".utf8)), now: .zero) }
    #expect(throws: TransferError.unexpected(.commit)) { try receiver.receive(.commit(tree: tree), now: .zero) }
    receiver.discardAll()
}

/// Only a folder, for a receiver that takes none: nothing to open a connection with, so no
/// handshake at all; the folder is reported once.
@Test func onlyAFolderForAReceiverWithoutFoldersOpensNothing() {
    var sender = TransferSender(items: treeItems("t", sampleTree), makeHasher: { TestHasher() }, makeID: { sampleID })
    #expect(sender.openingMessages(receiverOffers: [.pipelining, .compression]).isEmpty)
    #expect(sender.isFinished)
    #expect(sender.takeEvents() == [.fileFailed(index: 0, .foldersNotSupported), .finished])
}

/// A folder whose last file took longer than the partial lifetime, then lost its link, waits the
/// whole lifetime from the loss, like the file does; then both go.
@Test func aFolderWaitsFromTheLostLinkNotFromItsLastEntry() throws {
    let store = MemoryFileStore()
    var receiver = TransferReceiver(store: store, makeHasher: { TestHasher() }, partialLifetime: .seconds(600), trees: store)
    let tree = TransferID(bytes: Array(repeating: 7, count: 16))!
    let entry = TransferID(bytes: Array(repeating: 8, count: 16))!
    _ = try receiver.begin(sender: "s", senderKey: [1], opening: [.hello(.folders), .folder(id: sampleID, tree: tree, path: Array("t".utf8))], now: .zero)
    _ = try receiver.receive(.entry(.init(id: entry, tree: tree, size: 1 << 20, executable: false, path: Array("t/big".utf8))), now: .zero)
    _ = try receiver.receive(.data([1, 2, 3]), now: Instant(nanoseconds: 700_000_000_000))
    receiver.connectionLost(now: Instant(nanoseconds: 700_000_000_000))
    receiver.expirePartials(now: Instant(nanoseconds: 750_000_000_000))
    #expect(receiver.openTreeCount == 1 && receiver.partialCount == 1)
    receiver.expirePartials(now: Instant(nanoseconds: 1_301_000_000_000))
    #expect(receiver.openTreeCount == 0 && receiver.partialCount == 0)
    #expect(store.openTemporaries == 0 && store.openTrees == 0)
}

/// A `CompletedMemory` in memory, as a restarted receiver finds it.
private final class Remembered: CompletedMemory {
    var recalled: [CompletedTransfer] = []
    func remember(_ transfer: CompletedTransfer) throws { recalled.append(transfer) }
}

/// A file done in a sent folder counts as done only in that folder. Here the folder is gone
/// (abandoned when its sender broke the rules, or lost with its staging folder in a power cut)
/// and the sender sends it again: the file is received again, not answered as done, and the
/// folder placed has it. (Found in the lab's power-loss run: a folder placed without the two
/// files an abandoned one had.)
@Test(arguments: ["abandoned", "lost in a restart"])
func aFileDoneInAFolderThatIsGoneIsReceivedAgain(_ how: String) throws {
    let store = MemoryFileStore()
    let memory = Remembered()
    let tree = TransferID(halves: (6, 0)), top = TransferID(halves: (6, 1)), file = TransferID(halves: (6, 2))
    let bytes: [UInt8] = [4, 5, 6]
    var hasher = TestHasher()
    hasher.update(bytes)
    let digest = hasher.finalize()
    let opening: [TransferMessage] = [.hello(.folders), .folder(id: top, tree: tree, path: Array("album".utf8))]
    let entry = TransferMessage.entry(.init(id: file, tree: tree, size: 3, executable: false, path: Array("album/f".utf8)))
    var first = TransferReceiver(ledger: ReceiverLedger(store: store, makeHasher: { TestHasher() }, trees: store, completedMemory: memory))
    _ = try first.begin(sender: "s", senderKey: [1], opening: opening, now: .zero)
    #expect(try first.receive(entry, now: .zero) == [.accept(id: file, offset: 0)])
    _ = try first.receive(.data(bytes), now: .zero)
    #expect(try first.receive(.done(id: file, hash: digest), now: .zero) == [.confirm(id: file, status: .saved, storedName: "f")])
    let ledger: ReceiverLedger
    if how == "abandoned" {
        first.abandonCurrent(because: .senderBrokeProtocol(.moreBytesThanOffered))
        ledger = first.ledger
    } else {
        // The staging folder did not outlive the cut; the completed-transfers record did.
        ledger = ReceiverLedger(store: store, makeHasher: { TestHasher() }, trees: store, completedMemory: memory)
    }
    #expect(ledger.openTreeCount == 0)
    var again = TransferReceiver(ledger: ledger)
    #expect(try again.begin(sender: "s", senderKey: [1], opening: opening, now: .zero).last == .confirm(id: top, status: .saved, storedName: "album"))
    #expect(ledger.openTreeCount == 1, "the folder is built again")
    #expect(try again.receive(entry, now: .zero) == [.accept(id: file, offset: 0)], "the file is received again")
    _ = try again.receive(.data(bytes), now: .zero)
    #expect(try again.receive(.done(id: file, hash: digest), now: .zero) == [.confirm(id: file, status: .saved, storedName: "f")])
    #expect(try again.receive(.commit(tree: tree), now: .zero) == [.confirm(id: tree, status: .saved, storedName: "album")])
    #expect(store.committed == ["album/f": bytes])
}

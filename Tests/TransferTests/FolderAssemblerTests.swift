import Pipeline
import TestDoubles
import Testing
@testable import Transfer

private let bob = AuthenticatedSender(name: "bob", key: [9])
private let tree = TransferID(bytes: Array(repeating: 0xEE, count: 16))!

private func id(_ n: UInt8) -> TransferID { TransferID(bytes: Array(repeating: n, count: 16))! }
/// A folder assembler over a ledger of its own (folders live 60 s, two per sender).
private func assembler(trees: (any TreeStore)?) -> FolderAssembler {
    FolderAssembler(ledger: ReceiverLedger(store: MemoryFileStore(), makeHasher: { TestHasher() }, partialLifetime: .seconds(60),
                                           maxPartialsPerSender: 2, trees: trees))
}

private func wire(_ path: String) -> [UInt8] { Array(path.utf8) }
private func entry(_ path: String, id n: UInt8 = 7, in tree: TransferID = tree) -> TransferMessage.Entry {
    .init(id: id(n), tree: tree, size: 1, executable: false, path: wire(path))
}

@Test func aFolderOpensAtItsTopTakesItsItemsAndMovesIntoPlace() throws {
    let store = MemoryFileStore()
    var folders = assembler(trees: store)
    var events: [TransferReceiver.Event] = []
    #expect(folders.folder(id(1), tree: tree, path: wire("top"), now: .zero, from: bob, events: &events)
            == .confirm(id: id(1), status: .saved, storedName: "top"))
    #expect(folders.folder(id(2), tree: tree, path: wire("top/sub"), now: .zero, from: bob, events: &events)
            == .confirm(id: id(2), status: .saved, storedName: "sub"))
    guard case .placed(.tree(let path, let incoming, let below, false)) = folders.place(entry("top/sub/f"), now: .zero, from: bob) else {
        Issue.record("not placed")
        return
    }
    #expect(path == "top/sub/f" && below == ["sub", "f"])
    let file = try incoming.beginFile(below, id: id(3), size: 1, executable: false)
    try file.write([5], at: 0)
    _ = try file.commit()
    #expect(folders.commit(tree, from: bob, events: &events) == .confirm(id: tree, status: .saved, storedName: "top"))
    #expect(events == [.folderSaved(sender: "bob", name: "top", storedName: "top", files: 1)])
    #expect(folders.count == 0 && store.committed["top/sub/f"] == [5])
    // Asked again (the confirm was lost): the same answers, from memory.
    #expect(folders.commit(tree, from: bob, events: &events) == .confirm(id: tree, status: .saved, storedName: "top"))
    #expect(folders.folder(id(2), tree: tree, path: wire("top/sub"), now: .zero, from: bob, events: &events)
            == .confirm(id: id(2), status: .saved, storedName: "sub"))
}

@Test func itemsOutsideAnOpenFolderAreRefused() {
    var folders = assembler(trees: MemoryFileStore())
    var events: [TransferReceiver.Event] = []
    #expect(folders.folder(id(2), tree: tree, path: wire("top/sub"), now: .zero, from: bob, events: &events)
            == .reject(id: id(2), reason: .noFolder))
    #expect(folders.folder(id(3), tree: tree, path: wire("a/../b"), now: .zero, from: bob, events: &events)
            == .reject(id: id(3), reason: .badName))
    #expect(folders.commit(tree, from: bob, events: &events) == .reject(id: tree, reason: .noFolder))
    _ = folders.folder(id(1), tree: tree, path: wire("top"), now: .zero, from: bob, events: &events)
    #expect(folders.folder(id(4), tree: tree, path: wire("top"), now: .zero, from: bob, events: &events)
            == .reject(id: id(4), reason: .exists), "a tree opens once")
    let refusals: [(TransferMessage.Entry, FolderAssembler.Placement)] = [
        (entry("top"), .refused(name: "?", .badName)),                    // a file needs a folder above it
        (entry("other/f"), .refused(name: "other/f", .noFolder)),         // not below the top folder
        (entry("top/f", in: id(8)), .refused(name: "top/f", .noFolder)),  // a tree never opened
        (entry("top//f"), .refused(name: "?", .badName)),
    ]
    for (item, expected) in refusals {
        guard case .refused(let name, let reason) = folders.place(item, now: .zero, from: bob),
              case .refused(let expectedName, let expectedReason) = expected else {
            Issue.record("\(item.path) placed")
            continue
        }
        #expect(name == expectedName && reason == expectedReason)
    }
    // Another sender cannot add to bob's folder.
    #expect(folders.folder(id(5), tree: tree, path: wire("top/x"), now: .zero, from: AuthenticatedSender(name: "eve", key: [6]),
                           events: &events) == .reject(id: id(5), reason: .noFolder))
    // Without a tree store, every folder is refused.
    var none = assembler(trees: nil)
    #expect(none.folder(id(1), tree: tree, path: wire("top"), now: .zero, from: bob, events: &events) == .reject(id: id(1), reason: .exists))
}

@Test func foldersAreBoundedPerSenderAndInTime() {
    let store = MemoryFileStore()
    var folders = assembler(trees: store)
    var events: [TransferReceiver.Event] = []
    for n in UInt8(1)...3 {
        _ = folders.folder(id(n), tree: id(0x10 + n), path: wire("t\(n)"), now: Instant.zero.advanced(by: .seconds(Int(n))), from: bob, events: &events)
    }
    #expect(folders.count == 2 && store.openTrees == 2, "the least recently active went")
    folders.connectionLost(of: bob.key, now: Instant.zero.advanced(by: .seconds(10)))
    folders.expire(now: Instant.zero.advanced(by: .seconds(70)))
    #expect(folders.count == 2, "they wait from when the link dropped")
    folders.expire(now: Instant.zero.advanced(by: .seconds(71)))
    #expect(folders.count == 0 && store.openTrees == 0)
}

@Test func abandoningASendersFoldersRemovesAndReportsThem() {
    let store = MemoryFileStore()
    var folders = assembler(trees: store)
    var events: [TransferReceiver.Event] = []
    _ = folders.folder(id(1), tree: tree, path: wire("top"), now: .zero, from: bob, events: &events)
    folders.abandon(from: bob, because: .tampered, events: &events)
    #expect(events == [.fileFailed(sender: "bob", name: "top", .tampered)])
    #expect(folders.count == 0 && store.openTrees == 0)
}

/// Folders made and committed on the spot (no storage work handed out).
extension FolderAssembler {
    mutating func folder(_ id: TransferID, tree: TransferID, path: [UInt8], now: Instant, from sender: AuthenticatedSender,
                         events: inout [Event]) -> TransferMessage? {
        var storage = StorageHandOff()
        return folder(id, tree: tree, path: path, now: now, storage: &storage, from: sender, events: &events)
    }

    mutating func commit(_ tree: TransferID, from sender: AuthenticatedSender, events: inout [Event]) -> TransferMessage? {
        var storage = StorageHandOff()
        return commit(tree, storage: &storage, from: sender, events: &events)
    }
}

import TestDoubles
import Testing
@testable import Transfer
import Pipeline

private func id(_ n: UInt8) -> TransferID { TransferID(bytes: Array(repeating: n, count: 16))! }

private func outgoing(_ index: Int, _ source: any FileSource, id n: UInt8) -> Outgoing {
    Outgoing(index: index, item: .file(source), id: id(n), hash: RunningHash(TestHasher()))
}

private func hash(_ bytes: [UInt8]) -> [UInt8] {
    var hasher = TestHasher()
    hasher.update(bytes)
    return hasher.finalize()
}

// MARK: - RunningHash

@Test func theRunningHashTakesEachByteOnceWhateverIsReadAgain() {
    let bytes = pattern(100)
    var running = RunningHash(TestHasher())
    running.absorb(Array(bytes[0..<60]), at: 0)
    running.absorb(Array(bytes[40..<80]), at: 40)   // a resume at 40 reads 40..<60 again
    running.absorb(Array(bytes[50..<70]), at: 50)   // nothing new
    #expect(running.finish(at: 70) == nil, "the bytes hashed end at 80")
    running.absorb(Array(bytes[80..<100]), at: 80)
    #expect(running.finish(at: 100) == hash(bytes))
    #expect(running.digest == hash(bytes))
    #expect(running.finish(at: 3) == hash(bytes), "once made, the hash stays")
}

// MARK: - FileStreamer

@Test func theStreamerCutsAFileIntoDataAndEndsWithItsHash() throws {
    let bytes = pattern(10)
    var streamer = FileStreamer(encoder: ChunkEncoder(compressor: nil))
    streamer.dataPerRecord = 4
    var file = outgoing(0, MemoryFileSource(name: "f", bytes: bytes), id: 1)
    var messages: [TransferMessage] = []
    while !file.link.doneSent { messages.append(try streamer.next(for: &file, compressing: false)) }
    #expect(messages == [.data(Array(bytes[0..<4])), .data(Array(bytes[4..<8])), .data(Array(bytes[8..<10])), .done(id: id(1), hash: hash(bytes))])
    #expect(streamer.fileBytesSent == 10 && streamer.payloadBytesSent == 10)
    #expect(file.nextOffset == 10 && file.highestSent == 10)
    streamer.dataPerRecord = 0
    #expect(streamer.dataPerRecord == 1)
    streamer.dataPerRecord = 1 << 20
    #expect(streamer.dataPerRecord == TransferConstants.maxDataPerRecord)
}

/// A source that fails in the ways a file can: refuses to be read, returns too much, or ends early.
private final class FaultySource: FileSource {
    enum Fault { case refuses, overflows, endsAt(Int) }
    let name = "faulty.bin"
    let fault: Fault
    init(_ fault: Fault) { self.fault = fault }
    var size: UInt64? { 100 }
    func read(at offset: UInt64, count: Int) throws -> [UInt8] {
        switch fault {
        case .refuses: throw StorageError(.io, "cannot read faulty.bin: Input/output error")
        case .overflows: return Array(repeating: 1, count: count + 1)
        case .endsAt(let end): return Array(repeating: 1, count: max(0, min(count, end - Int(offset))))
        }
    }
}

@Test func aFileThatCannotBeReadStopsTheSenderWithTheSourcesOwnError() {
    let table: [(FaultySource.Fault, FileSourceError.Code)] = [(.refuses, .unreadable), (.overflows, .readTooMuch), (.endsAt(30), .shrank)]
    for (fault, code) in table {
        var streamer = FileStreamer(encoder: ChunkEncoder(compressor: nil))
        var file = outgoing(0, FaultySource(fault), id: 1)
        var caught: TransferError?
        do {
            while !file.link.doneSent { _ = try streamer.next(for: &file, compressing: false) }
        } catch {
            caught = error
        }
        guard case .sourceFailed(let failure) = caught else { Issue.record("\(fault): \(String(describing: caught))"); continue }
        #expect(failure.code == code && failure.name == "faulty.bin")
        if code == .unreadable {
            #expect(failure.cause?.code == .io)
            #expect(failure.description == "cannot read faulty.bin: Input/output error", "the file system's words, as before")
        }
    }
}

@Test func theStreamerSendsCompressibleChunksAsZdataWhileCompressing() throws {
    let bytes = Array(repeating: UInt8(3), count: 20_000)
    let compressor = RunCompressor()
    var streamer = FileStreamer(encoder: ChunkEncoder(compressor: compressor))
    var file = outgoing(0, MemoryFileSource(name: "z", bytes: bytes), id: 1)
    #expect(try streamer.next(for: &file, compressing: true) == .zdata(originalSize: TransferConstants.maxCompressedChunk, frame: [3]))
    #expect(streamer.fileBytesSent == UInt64(TransferConstants.maxCompressedChunk) && streamer.payloadBytesSent == 1)
    streamer.restart()
    #expect(compressor.resets == 1)
}

// MARK: - OfferWindow

@Test func theWindowChecksEveryAnswerAgainstWhatWasOffered() throws {
    var window = OfferWindow()
    var first = outgoing(0, MemoryFileSource(name: "a", bytes: pattern(10)), id: 1)
    first.link.offered = true
    first.link.eager = true
    var second = outgoing(1, MemoryFileSource(name: "b", bytes: pattern(10)), id: 2)
    second.link.offered = true
    window.append(first)
    window.append(second)
    #expect(throws: TransferError.unexpected(.accept)) { try window.accept(id(2), offset: 0) }
    #expect(throws: TransferError.cannotResume(offset: 5)) { try window.accept(id(1), offset: 5) }
    let (accepted, resumedAt) = try window.accept(id(1), offset: 0)
    #expect(accepted.link.accepted && resumedAt == 0)
    #expect(throws: TransferError.ackBeyondSent) { try window.ack(id(1), received: 1) }
    #expect(throws: TransferError.unexpected(.ack)) { try window.ack(id(2), received: 0) }
    #expect(throws: TransferError.unexpected(.confirm)) { try window.confirm(id(1)) }
    window[0].highestSent = 10
    window[0].nextOffset = 10
    #expect(try window.ack(id(1), received: 4)?.acknowledged == 4)
    #expect(try window.ack(id(1), received: 4) == nil, "no news")
    window[0].link.doneSent = true
    #expect(try window.confirm(id(1)).index == 0)
    #expect(throws: TransferError.unexpected(.reject)) { try window.reject(id(1)) }
    #expect(try window.reject(id(2)).index == 1)
    #expect(window.isEmpty)
}

@Test func aResumeMayStartAnywhereItSentButAStreamNotBeforeWhatWasAcknowledged() throws {
    var window = OfferWindow()
    var file = outgoing(0, MemoryFileSource(name: "s", bytes: pattern(100), asStream: true), id: 1)
    file.link.offered = true
    file.highestSent = 80
    file.acknowledged = 40
    window.append(file)
    #expect(throws: TransferError.cannotResume(offset: 81)) { try window.accept(id(1), offset: 81) }
    #expect(throws: TransferError.cannotResume(offset: 39)) { try window.accept(id(1), offset: 39) }
    let (resumed, resumedAt) = try window.accept(id(1), offset: 60)
    #expect(resumedAt == 60 && resumed.nextOffset == 60 && resumed.acknowledged == 60)
}

@Test func theWindowLetsOffersGoOneAtATimeOrPipelinedUpToItsLimit() {
    var window = OfferWindow()
    #expect(window.mayOffer(pipelining: false))
    var file = outgoing(0, MemoryFileSource(name: "a", bytes: [1]), id: 1)
    file.link.offered = true
    window.append(file)
    #expect(!window.mayOffer(pipelining: true), "still being sent")
    window[0].link.doneSent = true
    #expect(!window.mayOffer(pipelining: false) && window.mayOffer(pipelining: true))
    for n in 1..<TransferSender.maxFilesInFlight {
        var more = outgoing(n, MemoryFileSource(name: "m", bytes: [1]), id: UInt8(n + 1))
        more.link.offered = true
        more.link.doneSent = true
        window.append(more)
    }
    #expect(!window.mayOffer(pipelining: true), "at most maxFilesInFlight unsettled")
    window.connectionLost()
    #expect(window.hasUnoffered && window.mayOffer(pipelining: false) && window.streamingIndex == nil)
    #expect(window.reoffer()?.index == 0)
}

@Test func theTransferWindowClosesAtItsSizeOfUnacknowledgedBytes() {
    var window = OfferWindow()
    var file = outgoing(0, MemoryFileSource(name: "a", bytes: [1]), id: 1)
    file.link.offered = true
    file.link.accepted = true
    file.nextOffset = TransferConstants.transferWindow - 1
    window.append(file)
    #expect(window.isOpen && window.streamingIndex == 0)
    window[0].nextOffset += 1
    #expect(!window.isOpen)
    window[0].acknowledged = 1
    #expect(window.isOpen)
}

// MARK: - FolderWalker

@Test func theWalkerSkipsTreesTheReceiverCannotTakeAndReportsEachOnce() {
    let items = [OutgoingItem.file(MemoryFileSource(name: "a", bytes: [1]))] + treeItems("t", [("f", [2])]) + treeItems("u", [("g", [3])], tree: 0xDD)
    var counter: UInt8 = 0
    var walker = FolderWalker(items: items, makeID: {
        counter += 1
        return id(counter)
    }, makeHasher: { TestHasher() })
    #expect(walker.hasFolders)
    var events: [TransferSender.Event] = []
    var handed: [Int] = []
    while let next = walker.nextItem(allowed: [], events: &events) { handed.append(next.index) }
    #expect(handed == [0] && walker.isExhausted)
    #expect(events == [.fileFailed(index: 1, .foldersNotSupported), .fileFailed(index: 4, .foldersNotSupported)])
}

@Test func aRefusedTopFolderTakesItsTreeWithItAndCommitsGoUnderTheTreeID() {
    let items = treeItems("t", [("f", [2])], tree: 0xEE) + [OutgoingItem.file(MemoryFileSource(name: "after", bytes: [1]))]
    var walker = FolderWalker(items: items, makeID: { id(1) }, makeHasher: { TestHasher() })
    var events: [TransferSender.Event] = []
    guard let top = walker.nextItem(allowed: .folders, events: &events) else { Issue.record("nothing"); return }
    #expect(top.item.opensTree && top.id != id(1), "a folder's id comes from its tree id and path")
    #expect(walker.reports(top.item))
    walker.refused(top.item)
    #expect(walker.reports(top.item), "the top folder's own refusal is news")
    guard let rest = walker.nextItem(allowed: .folders, events: &events) else { Issue.record("nothing"); return }
    #expect(rest.index == items.count - 1, "the rest of the tree is skipped")
    #expect(!walker.reports(items[1]))
    #expect(events.isEmpty)

    var whole = FolderWalker(items: items, makeID: { id(1) }, makeHasher: { TestHasher() })
    var ids: [TransferID] = []
    while let next = whole.nextItem(allowed: .folders, events: &events) {
        if case .commit = next.item { ids.append(next.id) }
    }
    #expect(ids == [id(0xEE)])
}

/// A folder item's id is the same in every run under the same tree id (so a run again is answered
/// from what the receiver kept), and differs between folders and between trees.
@Test func folderItemsGoUnderIDsMadeFromTheirTreeAndPath() {
    func folderIDs(_ items: [OutgoingItem]) -> [TransferID] {
        var counter: UInt8 = 0
        var walker = FolderWalker(items: items, makeID: {
            counter += 1
            return id(counter)
        }, makeHasher: { TestHasher() })
        var events: [TransferSender.Event] = []
        var ids: [TransferID] = []
        while let next = walker.nextItem(allowed: .folders, events: &events) {
            if case .folder = next.item { ids.append(next.id) }
        }
        return ids
    }
    let items = [OutgoingItem.folder(tree: id(0xA0), path: Array("t".utf8)), .folder(tree: id(0xA0), path: Array("t/sub".utf8))]
    let first = folderIDs(items)
    #expect(first.count == 2 && first[0] != first[1])
    #expect(folderIDs(items) == first)
    let otherTree = [OutgoingItem.folder(tree: id(0xA1), path: Array("t".utf8))]
    #expect(folderIDs(otherTree) != [first[0]])
}

// MARK: - ExtensionRequest

@Test func aSenderAsksForWhatBothCanUseAndTakesNoMoreThanThat() throws {
    var request = ExtensionRequest(usable: [.compression, .firstContact])
    #expect(request.open(receiverOffers: [.compression, .pipelining]) == .compression)
    #expect(request.extensions.isEmpty)
    #expect(throws: TransferError.unexpected(.hello)) { try request.receiveHello([.compression, .pipelining]) }
    try request.receiveHello(.compression)
    #expect(request.extensions == .compression)
    #expect(throws: TransferError.unexpected(.hello)) { try request.receiveHello(.compression) }
    // After anything else the receiver said, a hello is out of place.
    _ = request.open(receiverOffers: .compression)
    request.heardFromReceiver()
    #expect(throws: TransferError.unexpected(.hello)) { try request.receiveHello(.compression) }
    // Nothing asked: no hello may come.
    _ = request.open(receiverOffers: [])
    #expect(throws: TransferError.unexpected(.hello)) { try request.receiveHello([]) }
}

@Test func busyComesOnlyAfterAGrantedBusyAndBeforeTheAnswer() throws {
    var request = ExtensionRequest(usable: [.busy, .firstContact])
    _ = request.open(receiverOffers: [.busy, .firstContact])
    #expect(throws: TransferError.unexpected(.busy)) { try request.checkBusy() }
    try request.receiveHello(.firstContact)
    #expect(throws: TransferError.unexpected(.busy)) { try request.checkBusy() }
    request.connectionLost()
    _ = request.open(receiverOffers: [.busy])
    try request.receiveHello(.busy)
    try request.checkBusy()
    request.openingWasAnswered()
    #expect(throws: TransferError.unexpected(.busy)) { try request.checkBusy() }
}

@Test func aSenderToldBusyStopsWithWhenToComeBack() throws {
    var sender = TransferSender(files: [MemoryFileSource(name: "a", bytes: [1])], makeHasher: { TestHasher() },
                                makeID: { sampleID })
    #expect(sender.openingMessages(receiverOffers: [.busy, .compression]) == [.hello(.busy), .offer(.init(id: sampleID, size: 1, name: "a"))])
    try sender.receive(.hello(.busy))
    #expect(throws: TransferError.receiverBusy(retryAfterSeconds: 7, ahead: 3)) {
        try sender.receive(.busy(retryAfterSeconds: 7, ahead: 3))
    }
}

@Test func pendingComesOnlyAfterAGrantedFirstContactAndBeforeTheAnswer() throws {
    var request = ExtensionRequest(usable: [.firstContact])
    _ = request.open(receiverOffers: .firstContact)
    #expect(throws: TransferError.unexpected(.pending)) { try request.receivePending() }
    try request.receiveHello(.firstContact)
    try request.receivePending()
    #expect(request.isAwaitingApproval)
    #expect(throws: TransferError.unexpected(.pending)) { try request.receivePending() }
    request.openingWasAnswered()
    #expect(!request.isAwaitingApproval)
    #expect(throws: TransferError.unexpected(.pending)) { try request.receivePending() }
    request.connectionLost()
    #expect(request.extensions.isEmpty && !request.isAwaitingApproval)
}

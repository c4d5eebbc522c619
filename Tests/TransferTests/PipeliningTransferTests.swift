import DequeModule
import Pipeline
import TestDoubles
import Testing
@testable import Transfer

/// A sender and a receiver with a round trip between them: the receiver's replies reach the
/// sender only `lag` sender messages later, as on a link where the sender keeps sending while
/// answers are on the way. A cut loses everything on the way in both directions.
struct LaggingConversation {
    var sender: TransferSender
    var receiver: TransferReceiver
    let store = MemoryFileStore()
    var lag: Int
    var senderEvents: [TransferSender.Event] = []
    var receiverEvents: [TransferReceiver.Event] = []
    /// Sender messages sent while no reply had reached it yet, per connection.
    var sentBeforeFirstReply: [Int] = []

    init(files: [any FileSource], pipelines: Bool, lag: Int = 40) {
        self.init(items: files.map(OutgoingItem.file), pipelines: pipelines, lag: lag)
    }

    init(items: [OutgoingItem], pipelines: Bool, lag: Int = 40, receiverTakesFolders: Bool = true) {
        var counter: UInt16 = 0
        sender = TransferSender(items: items, makeHasher: { TestHasher() }, makeID: {
            counter &+= 1
            return TransferID(bytes: Array(repeating: UInt8(truncatingIfNeeded: counter >> 8), count: 8)
                + Array(repeating: UInt8(truncatingIfNeeded: counter), count: 8))!
        }, pipelines: pipelines)
        receiver = TransferReceiver(store: store, makeHasher: { TestHasher() }, trees: receiverTakesFolders ? store : nil)
        self.lag = lag
    }

    /// One connection; returns true if the sender finished, false if cut after `cutAfter` messages.
    mutating func runConnection(cutAfter: Int? = nil) throws -> Bool {
        var toSender: Deque<(due: Int, TransferMessage)> = []
        var clock = 0
        // Message 2 arrives before any record can go.
        for reply in try receiver.begin(sender: "s", senderKey: [1], opening: sender.openingMessages(receiverOffers: receiver.grantable), now: .zero) {
            try sender.receive(reply)
        }
        var beforeReply = 0, replied = false
        while !sender.isFinished {
            if let cutAfter, clock >= cutAfter {
                sender.connectionLost()
                receiver.connectionLost(now: .zero)
                collect()
                sentBeforeFirstReply.append(beforeReply)
                return false
            }
            // Replies that have arrived by now.
            while let first = toSender.first, first.due <= clock || !sender.hasMessageReady {
                toSender.removeFirst()
                try sender.receive(first.1)
                replied = true
            }
            guard let message = try sender.nextMessage() else {
                if sender.isFinished { break }
                guard !toSender.isEmpty else { Issue.record("stalled"); return false }
                continue
            }
            clock += 1
            if !replied { beforeReply += 1 }
            for reply in try receiver.receive(message, now: .zero) { toSender.append((clock + lag, reply)) }
            collect()
        }
        collect()
        sentBeforeFirstReply.append(beforeReply)
        return true
    }

    private mutating func collect() {
        senderEvents += sender.takeEvents()
        receiverEvents += receiver.takeEvents()
    }

    var saved: Int { senderEvents.count { if case .fileSaved = $0 { true } else { false } } }
}

private func smallFiles(_ count: Int, size: Int = 1024) -> [MemoryFileSource] {
    (0..<count).map { MemoryFileSource(name: "f\($0)", bytes: pattern(size, seed: UInt8(truncatingIfNeeded: $0 + 1))) }
}

@Test func pipelinedSmallFilesGoWithoutWaitingForAnswers() throws {
    let files = smallFiles(100)
    var c = LaggingConversation(files: files, pipelines: true)
    #expect(try c.runConnection())
    #expect(c.saved == 100)
    for (i, file) in files.enumerated() { #expect(c.store.committed["f\(i)"] == file.bytes) }
    // 42 messages before the first answer in a record (the confirm of the first file's done, sent
    // second): the data, done and offers of 14 files.
    #expect(c.sentBeforeFirstReply == [42])

    var plain = LaggingConversation(files: smallFiles(100), pipelines: false)
    #expect(try plain.runConnection())
    #expect(plain.saved == 100)
    #expect(plain.sentBeforeFirstReply == [2])  // the first file's data and done, then it waits
}

@Test func aPipelineHoldsAtMostMaxFilesInFlight() throws {
    var c = LaggingConversation(files: smallFiles(200, size: 10), pipelines: true, lag: 10_000)
    var sent = 0
    _ = try c.receiver.begin(sender: "s", senderKey: [1], opening: c.sender.openingMessages(receiverOffers: c.receiver.grantable), now: .zero)
    try c.sender.receive(.hello(.pipelining))
    try c.sender.receive(.accept(id: TransferID(bytes: Array(repeating: 0, count: 8) + Array(repeating: 1, count: 8))!, offset: 0))
    var offers = 1
    while let message = try c.sender.nextMessage() {
        sent += 1
        if case .offer = message { offers += 1 }
    }
    #expect(offers == TransferSender.maxFilesInFlight)
    #expect(sent > 0)
}

@Test func aRejectedFileInThePipelineDoesNotStopTheOthers() throws {
    var files: [any FileSource] = smallFiles(10)
    files[4] = MemoryFileSource(name: "..", bytes: [1, 2, 3])  // a name the receiver rejects
    var c = LaggingConversation(files: files, pipelines: true)
    #expect(try c.runConnection())
    #expect(c.saved == 9)
    #expect(c.senderEvents.contains(.fileFailed(index: 4, .rejected(.badName))))
    #expect(c.store.committed.count == 9)
    #expect(c.store.openTemporaries == 0)
}

/// 30 files of one data message each: about 91 messages in all.
@Test(arguments: [5, 17, 45, 80])
func aPipelineCutMidwayResumesEveryUnsettledFile(cutAfter: Int) throws {
    let files = smallFiles(30, size: 3000)
    var c = LaggingConversation(files: files, pipelines: true)
    #expect(try c.runConnection(cutAfter: cutAfter) == false)
    var connections = 1
    while try !c.runConnection() {
        connections += 1
        guard connections < 5 else { Issue.record("did not finish"); return }
    }
    #expect(c.saved == 30)
    for (i, file) in files.enumerated() { #expect(c.store.committed["f\(i)"] == file.bytes) }
    #expect(c.store.committed.count == 30)
    #expect(c.store.openTemporaries == 0)
}

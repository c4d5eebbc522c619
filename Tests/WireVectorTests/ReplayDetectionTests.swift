import Testing
import WireVectors

/// The replay is only worth something if it notices a difference: a vector changed by one bit,
/// one line or its outcome must fail against the endpoint that would have to produce it.
@Suite struct ReplayDetectionTests {
    static func vector(_ name: String) throws -> WireVector {
        let file = try #require(VectorCorpus.files.files.first { $0.name == name }, "\(name) missing")
        return try WireVector(parsing: file.text)
    }

    /// The index of the first datagram line sent by `side`, at or after `from`.
    static func firstDatagram(in vector: WireVector, from side: WireVector.Side, after from: Int = 0) throws -> Int {
        try #require(vector.events.indices.first { index in
            guard index >= from, case .datagram(let route, _) = vector.events[index].kind else { return false }
            return route.origin == side
        })
    }

    @Test(arguments: WireVector.Side.allCases)
    func aChangedByteInWhatTheSideSentFails(_ side: WireVector.Side) throws {
        var vector = try Self.vector("small-file.vec")
        let index = try Self.firstDatagram(in: vector, from: side, after: 3)
        guard case .datagram(let route, var bytes) = vector.events[index].kind else { return }
        bytes[bytes.count / 2] ^= 0x01
        vector.events[index].kind = .datagram(route, bytes)
        let failure = try #require(throws: ReplayFailure.self) { try Replay.run(vector, against: side) }
        #expect(failure.event == index + 1)
        guard case .wrongDatagram = failure.kind else {
            Issue.record("expected a wrong datagram, got \(failure)")
            return
        }
    }

    @Test(arguments: WireVector.Side.allCases)
    func aMissingLineFails(_ side: WireVector.Side) throws {
        var vector = try Self.vector("ten-kib-file.vec")
        vector.events.remove(at: try Self.firstDatagram(in: vector, from: side, after: 3))
        #expect(throws: ReplayFailure.self) { try Replay.run(vector, against: side) }
    }

    @Test func aWrongExpectationFails() throws {
        var vector = try Self.vector("tampered-record.vec")
        vector.expect = .failure(code: "linkLost", raisedBy: .receiver)
        let failure = try #require(throws: ReplayFailure.self) { try Replay.run(vector, against: .receiver) }
        #expect(failure.kind == .unexpectedError("record.authenticationFailed"))
        vector.expect = .success
        #expect(throws: ReplayFailure.self) { try Replay.run(vector, against: .receiver) }
    }

    @Test func aWrongTickFails() throws {
        var vector = try Self.vector("small-file.vec")
        let tick = try #require(vector.events.firstIndex { if case .tick = $0.kind { true } else { false } })
        vector.events[tick].kind = .tick(senderDue: false, receiverDue: true)
        let failure = try #require(throws: ReplayFailure.self) { try Replay.run(vector, against: .sender) }
        guard case .wrongDeadline = failure.kind else {
            Issue.record("expected a wrong deadline, got \(failure)")
            return
        }
    }

    @Test func filesTheReceiverDoesNotHoldFail() throws {
        var vector = try Self.vector("bad-name-dot-dot.vec")
        vector.files[0].stored = true
        #expect(throws: ReplayFailure.self) { try Replay.run(vector, against: .receiver) }
    }

    @Test func aHeaderThatDoesNotAddUpFails() throws {
        var vector = try Self.vector("small-file.vec")
        vector.senderPublic = vector.receiverPublic
        let failure = try #require(throws: ReplayFailure.self) { try Replay.run(vector, against: .sender) }
        guard case .setup = failure.kind else {
            Issue.record("expected a set-up failure, got \(failure)")
            return
        }
    }
}

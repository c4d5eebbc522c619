import Testing
@testable import BlueZ

@Suite("Accept queue", .timeLimit(.minutes(1)))
struct AcceptQueueTests {
    func link(_ device: String) -> GattLink { GattLink(device: device, mtu: 23, sendsNotifications: true) }

    @Test func linksAreHandedOutOldestFirst() async throws {
        let queue = AcceptQueue<GattLink>()
        let (a, b) = (link("/a"), link("/b"))
        #expect(queue.offer(a))
        #expect(queue.offer(b))
        #expect(try await queue.accept() === a)
        #expect(try await queue.accept() === b)
    }

    @Test func aWaitingAcceptGetsTheNextLink() async throws {
        let queue = AcceptQueue<GattLink>()
        let waiting = Task { try await queue.accept() }
        try await Task.sleep(for: .milliseconds(50))
        let a = link("/a")
        #expect(queue.offer(a))
        #expect(try await waiting.value === a)
    }

    @Test func aFailureEndsWaitingAndLaterAcceptsAfterTheQueuedLinks() async throws {
        let queue = AcceptQueue<GattLink>()
        let waiting = Task { () async throws(BlueZError) -> GattLink in try await queue.accept() }
        try await Task.sleep(for: .milliseconds(50))
        queue.fail(.bluetoothdNotRunning)
        await #expect(throws: BlueZError.bluetoothdNotRunning) { try await waiting.value }
        let late = link("/late")
        #expect(queue.offer(late))
        #expect(try await queue.accept() === late)
        // The first failure sticks, also over closing.
        queue.fail(.linkLost)
        queue.close()
        await #expect(throws: BlueZError.bluetoothdNotRunning) { try await queue.accept() }
    }

    @Test func closingEndsWaitingWithLinkLost() async throws {
        let queue = AcceptQueue<GattLink>()
        let waiting = Task { () async throws(BlueZError) -> GattLink in try await queue.accept() }
        try await Task.sleep(for: .milliseconds(50))
        queue.close()
        await #expect(throws: BlueZError.linkLost) { try await waiting.value }
        await #expect(throws: BlueZError.linkLost) { try await queue.accept() }
    }

    /// Issue 31: a stuck receiver does not pile up links: beyond `capacity` waiting, a link is
    /// refused (its offerer closes it); a waiting `accept()` still takes one at once, and once one
    /// is taken there is room again.
    @Test func linksBeyondTheCapacityAreRefused() async throws {
        let queue = AcceptQueue<GattLink>(capacity: 2)
        let (a, b, c, d) = (link("/a"), link("/b"), link("/c"), link("/d"))
        #expect(queue.offer(a))
        #expect(queue.offer(b))
        #expect(!queue.offer(c))
        #expect(try await queue.accept() === a)
        #expect(queue.offer(d))
        #expect(try await queue.accept() === b)
        #expect(try await queue.accept() === d)
        let waiting = Task { try await queue.accept() }
        try await Task.sleep(for: .milliseconds(50))
        #expect(queue.offer(c))
        #expect(try await waiting.value === c)
        #expect(AcceptQueue<GattLink>(capacity: 0).capacity == 1)
    }
}

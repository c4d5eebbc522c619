import Glibc
import Pipeline
import SocketIO
import Testing
@testable import BlueZ

/// `GattLink.takeSockets`: both acquired sockets go to a driver when no D-Bus path is in use, and
/// the link then leaves them alone (its read source starts only at the first `receive`).
@Suite("GattLink socket hand-over", .timeLimit(.minutes(1)))
struct GattLinkHandOverTests {
    /// Our end and bluetoothd's end of one acquired socket.
    func acquired() throws -> (ours: Int32, bluetoothd: Int32) {
        var pair: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0)
        return (pair[0], pair[1])
    }

    func send(_ fd: Int32, _ bytes: [UInt8]) {
        #expect(bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, 0) } == bytes.count)
    }

    /// Whether a datagram is still waiting in `fd` (nobody read it).
    func waiting(_ fd: Int32) -> Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) == 1
    }

    @Test func theCentralHandsOverBothSocketsAndReadsNeither() async throws {
        let write = try acquired(), notify = try acquired()
        let link = GattLink(device: nil, mtu: 517, sendsNotifications: false)
        link.attachOutbound(fd: write.ours, mtu: 517)
        link.attachInbound(fd: notify.ours)
        send(notify.bluetoothd, [1, 2, 3])
        try await Task.sleep(for: .milliseconds(50))
        let wake = try #require(WakeSignal())
        let sockets = try #require(await link.takeSockets(wakingOnClose: wake))
        #expect(sockets == DatagramSockets(inbound: notify.ours, outbound: write.ours))
        #expect(waiting(notify.ours), "the link must not have read the socket")
        #expect(await link.takeSockets(wakingOnClose: nil) == nil, "only once")
        #expect(wake.raised == nil)
        await link.close()
        #expect(wake.raised == .closed)
        #expect(link.isClosed)
        Glibc.close(write.bluetoothd)
        Glibc.close(notify.bluetoothd)
    }

    @Test func aDatagramByDBusKeepsTheSockets() async throws {
        let write = try acquired(), notify = try acquired()
        let link = GattLink(device: nil, mtu: 517, sendsNotifications: true)
        link.attachInbound(fd: write.ours)
        link.deliver([9])
        link.attachOutbound(fd: notify.ours, mtu: 517)
        #expect(await link.takeSockets(wakingOnClose: nil) == nil)
        #expect(try await link.receive() == [9])
        send(write.bluetoothd, [4])
        #expect(try await link.receive() == [4], "read by the link, which kept the sockets")
        await link.close()
    }

    @Test func aDBusSinkKeepsTheSockets() async throws {
        let write = try acquired()
        let link = GattLink(device: nil, mtu: 517, sendsNotifications: true, handOverPatience: .seconds(5))
        link.attachInbound(fd: write.ours)
        link.setSink { _ in }
        let start = ContinuousClock.now
        #expect(await link.takeSockets(wakingOnClose: nil) == nil)
        #expect(ContinuousClock.now - start < .seconds(1), "no waiting for a socket that will not come")
        await link.close()
    }

    @Test func aLinkBeingReadKeepsItsSockets() async throws {
        let write = try acquired(), notify = try acquired()
        let link = GattLink(device: nil, mtu: 517, sendsNotifications: false)
        link.attachOutbound(fd: write.ours, mtu: 517)
        link.attachInbound(fd: notify.ours)
        send(notify.bluetoothd, [5])
        #expect(try await link.receive() == [5])
        #expect(await link.takeSockets(wakingOnClose: nil) == nil)
        await link.close()
    }

    /// The peripheral's link exists from the peer's first call; the notify socket follows.
    @Test func thePeripheralWaitsForTheSecondSocket() async throws {
        let write = try acquired(), notify = try acquired()
        let link = GattLink(device: nil, mtu: 517, sendsNotifications: true)
        link.attachInbound(fd: write.ours)
        Task {
            try await Task.sleep(for: .milliseconds(100))
            link.attachOutbound(fd: notify.ours, mtu: 247)
        }
        let sockets = try #require(await link.takeSockets(wakingOnClose: nil))
        #expect(sockets == DatagramSockets(inbound: write.ours, outbound: notify.ours))
        #expect(link.mtu == 247)
        await link.close()
    }

    /// A peer that never subscribes: after a while the link is driven through `send`/`receive`,
    /// where our datagrams are dropped until someone listens and the peer's writes are read.
    @Test func aPeerThatNeverSubscribesGetsTheAsyncPath() async throws {
        let write = try acquired()
        let link = GattLink(device: nil, mtu: 517, sendsNotifications: true, handOverPatience: .milliseconds(100))
        link.attachInbound(fd: write.ours)
        send(write.bluetoothd, [6])
        #expect(await link.takeSockets(wakingOnClose: nil) == nil)
        try await link.send([1])
        #expect(try await link.receive() == [6])
        await link.close()
    }

    @Test func aLinkClosedFirstHandsNothingOver() async throws {
        let link = GattLink(device: nil, mtu: 517, sendsNotifications: true, handOverPatience: .seconds(5))
        Task {
            try await Task.sleep(for: .milliseconds(50))
            await link.close()
        }
        #expect(await link.takeSockets(wakingOnClose: nil) == nil)
    }
}

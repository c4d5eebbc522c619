import Glibc
import Pipeline
import SocketIO
import Testing
@testable import L2CAP

/// The channel's datagram handling over a unix `SOCK_SEQPACKET` pair (the same one-send-one-datagram
/// semantics as an L2CAP socket; the kernel's Bluetooth part is covered in the lab).
@Suite("L2CAP channel as a datagram transport", .timeLimit(.minutes(1)))
struct L2CAPChannelTests {
    let peer = BluetoothAddress("00:AA:01:00:00:00", kind: .public)!

    /// A channel on one end of a socket pair, and the other end's descriptor.
    func channel(sendSize: Int = 4096, receiveSize: Int = 4096) throws -> (L2CAPChannel, Int32) {
        var pair: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &pair) == 0)
        _ = fcntl(pair[0], F_SETFL, fcntl(pair[0], F_GETFL) | O_NONBLOCK)
        return (L2CAPChannel(fd: pair[0], peer: peer, sendSize: sendSize, receiveSize: receiveSize, phy: "2M"), pair[1])
    }

    func read(_ fd: Int32) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 70_000)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        return n >= 0 ? Array(buffer[0..<n]) : []
    }

    @Test func sizesAndDescription() throws {
        let (link, other) = try channel(sendSize: 2048, receiveSize: 4096)
        defer { close(other) }
        #expect(link.maxDatagramSize == 2048)
        #expect(link.peerMaxDatagramSize == 4096)
        #expect(link.transportDescription == TransportDescription(kind: .l2cap, sendSize: 2048, receiveSize: 4096, phy: "2M"))
    }

    @Test func oneSendIsOneSDUUpToTheSendSize() async throws {
        let (link, other) = try channel(sendSize: 4096)
        defer { close(other) }
        let full = (0..<4096).map { UInt8(truncatingIfNeeded: $0) }
        try await link.send(full)
        try await link.send([7])
        #expect(read(other) == full)
        #expect(read(other) == [7])
        await #expect(throws: TransportError.datagramTooLarge(size: 4097, limit: 4096)) { try await link.send(full + [0]) }
        await link.close()
    }

    @Test func receivesWholeDatagramsAndEmptyOnes() async throws {
        let (link, other) = try channel()
        defer { close(other) }
        let big = [UInt8](repeating: 0xAB, count: 4096)
        _ = big.withUnsafeBytes { send(other, $0.baseAddress, $0.count, 0) }
        _ = send(other, nil, 0, 0)
        _ = [UInt8]([1, 2, 3]).withUnsafeBytes { send(other, $0.baseAddress, $0.count, 0) }
        #expect(try await link.receive() == big)
        #expect(try await link.receive() == [])   // an empty SDU is not the end of the channel
        #expect(try await link.receive() == [1, 2, 3])
        await link.close()
    }

    @Test func thePeerClosingEndsReceiving() async throws {
        let (link, other) = try channel()
        let waiting = Task { try await link.receive() }
        try await Task.sleep(for: .milliseconds(50))
        close(other)
        await #expect(throws: TransportError.closed) { try await waiting.value }
        #expect(link.isClosed)
        await #expect(throws: TransportError.closed) { try await link.send([1]) }
    }

    @Test func closingWakesAWaitingReceiveAndHandsNothingOver() async throws {
        let (link, other) = try channel()
        defer { close(other) }
        let waiting = Task { try await link.receive() }
        try await Task.sleep(for: .milliseconds(50))
        await link.close()
        await #expect(throws: TransportError.closed) { try await waiting.value }
        #expect(await link.takeSockets(wakingOnClose: nil) == nil)
    }

    @Test func closingRaisesTheDriversWakeSignal() async throws {
        let (link, other) = try channel()
        defer { close(other) }
        let signal = try #require(WakeSignal())
        #expect(await link.takeSockets(wakingOnClose: signal) != nil)
        #expect(signal.raised == nil)
        await link.close()
        #expect(signal.raised == .closed)
        // A link closed before the hand-over gives nothing and raises the signal at once.
        let late = try #require(WakeSignal())
        #expect(await link.takeSockets(wakingOnClose: late) == nil)
        #expect(late.raised == .closed)
    }

    @Test func handsOverOneSocketForBothDirections() async throws {
        let (link, other) = try channel()
        defer { close(other) }
        let sockets = try #require(await link.takeSockets(wakingOnClose: nil))
        #expect(sockets.inbound == sockets.outbound)
        #expect(sockets.inbound >= 0)
        await link.close()
    }
}

/// A listener that runs out of descriptors (a storm of channels holding them) keeps listening: it
/// tries again after a moment instead of ending, which once left blerecv taking no L2CAP channel
/// for the rest of its run; nothing waiting is no failure; anything else ends the listener.
@Test func runningOutOfDescriptorsDoesNotEndTheListener() {
    #expect(L2CAPSocket.AcceptFailure(errno: EMFILE) == .outOfResources)
    #expect(L2CAPSocket.AcceptFailure(errno: ENFILE) == .outOfResources)
    #expect(L2CAPSocket.AcceptFailure(errno: ENOBUFS) == .outOfResources)
    #expect(L2CAPSocket.AcceptFailure(errno: ENOMEM) == .outOfResources)
    #expect(L2CAPSocket.AcceptFailure(errno: EAGAIN) == .nothingWaiting)
    #expect(L2CAPSocket.AcceptFailure(errno: ECONNABORTED) == .nothingWaiting)
    #expect(L2CAPSocket.AcceptFailure(errno: EBADF) == .fatal)
}

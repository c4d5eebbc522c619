import Glibc
import Pipeline
import SocketIO
import Testing
@testable import BlueZ

/// The read side of an acquired write socket, over a real AF_UNIX SOCK_SEQPACKET socketpair (what
/// bluetoothd hands the peripheral). `recv` reads 0 bytes both for an empty datagram and at the
/// end of the socket; only the end closes the link (issue 9, defect 10).
@Suite("GattLink inbound socket", .timeLimit(.minutes(1)))
struct GattLinkInboundTests {
    /// Our end attached to a fresh link, and bluetoothd's end.
    func attachedPair() throws -> (link: GattLink, peer: Int32) {
        var pair: [Int32] = [-1, -1]
        let made = socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair)
        try #require(made == 0)
        let link = GattLink(device: nil, mtu: 517, sendsNotifications: true)
        link.attachInbound(fd: pair[0])
        return (link, pair[1])
    }

    func send(_ fd: Int32, _ bytes: [UInt8]) {
        let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, 0) }
        #expect(n == bytes.count)
    }

    @Test func emptyDatagramIsHandedUpAndTheLinkStaysOpen() async throws {
        let (link, peer) = try attachedPair()
        send(peer, [1, 2, 3])
        send(peer, [])
        send(peer, [4])
        #expect(try await link.receive() == [1, 2, 3])
        #expect(try await link.receive() == [])
        #expect(try await link.receive() == [4])
        #expect(!link.isClosed)
        // Only the end of the socket ends the link.
        Glibc.close(peer)
        await #expect(throws: TransportError.closed) { try await link.receive() }
        #expect(link.isClosed)
    }

    @Test func onlyAClosedPeerShowsAHangUp() throws {
        var pair: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &pair) == 0)
        defer { Glibc.close(pair[0]) }
        send(pair[1], [])
        #expect(!socketPeerClosed(pair[0]))
        var scratch = [UInt8](repeating: 0, count: 8)
        #expect(scratch.withUnsafeMutableBytes { recv(pair[0], $0.baseAddress, $0.count, 0) } == 0)
        #expect(!socketPeerClosed(pair[0]))
        Glibc.close(pair[1])
        #expect(socketPeerClosed(pair[0]))
    }
}

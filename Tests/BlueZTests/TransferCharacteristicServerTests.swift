import DBus
import Glibc
import Pipeline
import Synchronization
import Testing
@testable import BlueZ

/// The transfer characteristic's calls, without a bus: which link each call belongs to, what the
/// accept queue gets, and what the notifier is told.
@Suite("Transfer characteristic server", .timeLimit(.minutes(1)))
struct TransferCharacteristicServerTests {
    final class Notifications: Sendable {
        let sent = Mutex<[[UInt8]]>([])
        let notifying = Mutex<[Bool]>([])
        var notifier: GattNotifier {
            GattNotifier(
                notify: { [self] value in sent.withLock { $0.append(value) } },
                setNotifying: { [self] on in notifying.withLock { $0.append(on) } })
        }
    }

    let deviceA = "/org/bluez/hci0/dev_00_AA_01_01_00_01"
    let deviceB = "/org/bluez/hci0/dev_00_AA_01_01_00_02"

    @Test func aPeersCallsShareOneLinkThatTheQueueHandsOut() async throws {
        let notifications = Notifications()
        let queue = AcceptQueue<PeerConnection>()
        let server = TransferCharacteristicServer(notifier: notifications.notifier, links: queue)

        let write = try await server.acquireWrite(GattRequestOptions(device: deviceA, mtu: 185))
        #expect(write.mtu == 185)
        let link = try #require(try await queue.accept().gattLink)
        #expect(link.device == deviceA)
        #expect(link.mtu == 185)
        #expect(link.receivedWrites)

        // bluetoothd's end of the write socket reaches the link.
        let sent = [UInt8]([1, 2, 3]).withUnsafeBytes { send(write.fd, $0.baseAddress, $0.count, 0) }
        #expect(sent == 3)
        #expect(try await link.receive() == [1, 2, 3])

        // The same peer's other calls belong to the same link; the MTU follows the latest.
        let notify = try await server.acquireNotify(GattRequestOptions(device: deviceA, mtu: 247))
        #expect(link.mtu == 247)
        try await server.writeValue([4], options: GattRequestOptions(device: deviceA))
        #expect(try await link.receive() == [4])
        try await link.send([5, 6])
        var buffer = [UInt8](repeating: 0, count: 16)
        let n = buffer.withUnsafeMutableBytes { recv(notify.fd, $0.baseAddress, $0.count, 0) }
        #expect(Array(buffer.prefix(max(0, n))) == [5, 6])
        #expect(await server.readValue() == [])
        #expect(await server.hasNewerLink(than: link) == false)

        close(write.fd)
        close(notify.fd)
        await server.close()
    }

    @Test func anotherPeerEndsTheLinkAndStartsANewOne() async throws {
        let notifications = Notifications()
        let queue = AcceptQueue<PeerConnection>()
        let server = TransferCharacteristicServer(notifier: notifications.notifier, links: queue)
        try await server.writeValue([1], options: GattRequestOptions(device: deviceA, mtu: 100))
        let first = try #require(try await queue.accept().gattLink)
        try await server.writeValue([2], options: GattRequestOptions(device: deviceB))
        let second = try #require(try await queue.accept().gattLink)
        #expect(first.isClosed)
        #expect(second.device == deviceB)
        #expect(second.mtu == 23)
        #expect(try await second.receive() == [2])
        #expect(notifications.notifying.withLock { $0 } == [false])

        // Once closed, calls are refused.
        await server.close()
        #expect(second.isClosed)
        await #expect(throws: DBusErrorReply.failed("closed")) {
            try await server.writeValue([3], options: GattRequestOptions(device: deviceB))
        }
    }

    @Test func notificationsGoThroughTheNotifierWhileSubscribed() async throws {
        let notifications = Notifications()
        let queue = AcceptQueue<PeerConnection>()
        let server = TransferCharacteristicServer(notifier: notifications.notifier, links: queue)

        try await server.startNotify()
        let link = try #require(try await queue.accept().gattLink)
        #expect(link.device == nil)
        try await link.send([9])
        await server.stopNotify()
        try await link.send([10])  // nobody subscribed: dropped, as over the air
        #expect(notifications.sent.withLock { $0 } == [[9]])
        #expect(notifications.notifying.withLock { $0 } == [true, false])

        await server.closeCurrent()
        #expect(link.isClosed)
        #expect(notifications.notifying.withLock { $0 } == [true, false, false])
        await server.close()
    }
}

#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Pipeline
import Testing
@testable import BlesendCLI

/// blerecv under systemd (`Type=notify`): what it says, and that it reaches a real socket.
struct ServiceStatusTests {
    @Test(arguments: [
        (SystemdNotice.ready, "READY=1"),
        (.status("receiving a.txt from alice 45 %, 1 link"), "STATUS=receiving a.txt from alice 45 %, 1 link"),
        (.status("two\nlines"), "STATUS=two lines"),
        (.reloading(monotonicMicroseconds: 123), "RELOADING=1\nMONOTONIC_USEC=123"),
        (.stopping, "STOPPING=1"),
    ])
    func noticesAreSdNotifyAssignments(notice: SystemdNotice, text: String) {
        #expect(notice.assignment == text)
    }

    @Test func theStatusLineSaysWhatTheReceiverDoes() {
        var activity = ReceiverActivity(trusted: 3, maxLinks: 3)
        #expect(activity.statusLine == "waiting for senders (3 trusted)")
        activity.opened(1, device: "dev_1", transport: "l2cap")
        #expect(activity.statusLine == "1 link, no file yet")
        activity.authenticated(1, peer: "alice", fingerprint: "f")
        activity.fileStarted(1, name: "photo.jpg", size: 1_000, offset: 0, at: .zero)
        activity.progress(1, done: 450)
        #expect(activity.statusLine == "receiving photo.jpg from alice 45 %, 1 link")
        activity.opened(2, device: "dev_2", transport: "gatt")
        activity.authenticated(2, peer: "bob", fingerprint: "g")
        activity.fileStarted(2, name: "b.bin", size: nil, offset: 0, at: .zero)
        #expect(activity.statusLine == "receiving photo.jpg from alice 45 % (+1 more), 2 links")
        activity.fileEnded(1, name: "photo.jpg", peer: "alice", bytes: 1_000, saved: true)
        #expect(activity.statusLine == "receiving b.bin from bob, 2 links")
        #expect(activity.recent == [.init(name: "photo.jpg", peer: "alice", bytes: 1_000, saved: true)])
        activity.closed(1)
        activity.closed(2)
        #expect(activity.statusLine == "waiting for senders (3 trusted)")
        for i in 0..<7 { activity.fileEnded(9, name: "f\(i)", peer: "p", bytes: 1, saved: i != 3) }
        #expect(activity.recent.map(\.name) == ["f2", "f3", "f4", "f5", "f6"], "the last five")
    }

    @Test func theRateCountsFromWhereTheFileStartedOnThisConnection() throws {
        var activity = ReceiverActivity(trusted: 1, maxLinks: 3)
        activity.opened(1, device: nil, transport: "gatt")
        activity.fileStarted(1, name: "a", size: 10_000, offset: 4_000, at: .zero)
        activity.progress(1, done: 6_000)
        let channel = try #require(activity.channels[1])
        #expect(activity.rate(of: channel, at: Instant.zero.advanced(by: .milliseconds(500))) == nil, "too early")
        #expect(activity.rate(of: channel, at: Instant.zero.advanced(by: .seconds(2))) == 1_000)
    }

    /// A datagram socket bound where `NOTIFY_SOCKET` says, as systemd's; what arrives there.
    private final class FakeSystemd {
        let fd: Int32
        let name: String
        init(abstract: Bool) throws {
            fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
            let unique = "blesend-test-\(getpid())-\(Int.random(in: 0..<1_000_000))"
            name = abstract ? "@" + unique : NSTemporaryDirectory() + "/" + unique + ".sock"
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            var bytes = Array(name.utf8)
            if abstract { bytes[0] = 0 }
            withUnsafeMutableBytes(of: &address.sun_path) { path in for (i, b) in bytes.enumerated() { path[i] = b } }
            let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
            let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
            try #require(bound == 0, "bind: \(errno)")
            var timeout = timeval(tv_sec: 2, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }
        func receive() -> String? {
            var buffer = [UInt8](repeating: 0, count: 4_096)
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            return count > 0 ? String(decoding: buffer.prefix(count), as: UTF8.self) : nil
        }
        deinit {
            close(fd)
            if !name.hasPrefix("@") { unlink(name) }
        }
    }

    @Test(arguments: [false, true])
    func theNotifierReachesTheSocketSystemdNames(abstract: Bool) throws {
        let systemd = try FakeSystemd(abstract: abstract)
        let notifier = try #require(SystemdNotifier(environment: { $0 == "NOTIFY_SOCKET" ? systemd.name : nil }))
        notifier.send([.ready, .status("waiting for senders (1 trusted)")])
        #expect(systemd.receive() == "READY=1\nSTATUS=waiting for senders (1 trusted)")
    }

    @Test func noNotifySocketNoNotifier() {
        #expect(SystemdNotifier(environment: { _ in nil }) == nil)
        #expect(SystemdNotifier(environment: { _ in "relative/path" }) == nil)
    }

    @Test func theStatusIsToldWhenALinkOrFileChangesAndProgressAtMostOnceASecond() throws {
        let systemd = try FakeSystemd(abstract: true)
        let status = ReceiverStatus(activity: ReceiverActivity(trusted: 1, maxLinks: 3),
                                    notifier: SystemdNotifier(environment: { _ in systemd.name }))
        status.update { $0.opened(1, device: nil, transport: "gatt") }
        #expect(systemd.receive() == "STATUS=1 link, no file yet")
        status.update {
            $0.authenticated(1, peer: "alice", fingerprint: "f")
            $0.fileStarted(1, name: "a.txt", size: 100, offset: 0, at: .zero)
        }
        #expect(systemd.receive() == "STATUS=receiving a.txt from alice 0 %, 1 link", "a new file is told at once")
        status.update { $0.progress(1, done: 50) }
        status.update { $0.closed(1) }
        // The progress within the second was not told; the link's end was, at once.
        #expect(systemd.receive() == "STATUS=waiting for senders (1 trusted)")
    }
}

import Glibc
import Synchronization
import Testing
@testable import BlesendCLI

/// Issue 31, item 6: one blesend at a time on an adapter; the next waits, saying so once, and
/// takes the lock when the first lets it go.
@Suite("Adapter lock", .timeLimit(.minutes(1)))
struct AdapterLockTests {
    @Test func aSecondRunWaitsUntilTheFirstIsDone() async throws {
        var template = Array("/tmp/blesend-lock-XXXXXX".utf8CString)
        let folder = try #require(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }.map { String(cString: $0) })
        defer { _ = rmdir(folder) }
        let path = try #require(AdapterLock.path(adapter: "hci1", folder: folder))
        #expect(path == folder + "/blesend-hci1.lock")
        defer { _ = unlink(path) }
        var first = await AdapterLock.acquire(path: path) { Issue.record("the first run waited") }
        #expect(first != nil)
        let told = Mutex(0)
        let second = Task { await AdapterLock.acquire(path: path, poll: .milliseconds(10)) { told.withLock { $0 += 1 } } != nil }
        try await Task.sleep(for: .milliseconds(100))
        #expect(told.withLock { $0 } == 1)
        first = nil
        #expect(await second.value)
        #expect(told.withLock { $0 } == 1)
        var mode = stat()
        #expect(stat(path, &mode) == 0 && mode.st_mode & 0o777 == 0o644)
    }

    @Test func theDefaultAdapterIsBlueZsFirstPath() {
        #expect(AdapterLock.defaultAdapter(among: ["hci2", "hci10", "hci1:12", ".", "hci1"]) == "hci1")
        #expect(AdapterLock.defaultAdapter(among: ["hci10", "hci2"]) == "hci10")
        #expect(AdapterLock.defaultAdapter(among: [".", ".."]) == nil)
        #expect(AdapterLock.path(adapter: nil, folder: "/x", adapters: { ["hci3", "hci0:5"] }) == "/x/blesend-hci3.lock")
        #expect(AdapterLock.path(adapter: "/org/bluez/hci4", folder: "/x") == "/x/blesend-hci4.lock")
        #expect(AdapterLock.path(adapter: nil, folder: "/x", adapters: { [] }) == nil)
    }
}

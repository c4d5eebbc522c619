#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import BlesendCLI

/// `TerminalLineReader` on a real pseudo-terminal: a line typed before `discardPending` (type-ahead
/// that sat in the terminal's input queue) is thrown away by `tcflush`; a line typed after it is read.
@Suite("Terminal line reader", .timeLimit(.minutes(1)))
struct TerminalLineReaderTests {
    /// A libc function the Glibc module does not import (the pty calls need _XOPEN_SOURCE).
    static func libc<F>(_ name: String, as type: F.Type) throws -> F {
        let handle = dlopen(nil, RTLD_NOW)
        let symbol = try #require(dlsym(handle, name), "\(name) not found")
        return unsafeBitCast(symbol, to: type)
    }

    /// A pty pair: (the side a person types into, the side blerecv reads).
    static func pty() throws -> (keyboard: Int32, terminal: Int32) {
        typealias IntOfInt = @convention(c) (Int32) -> Int32
        let openpt = try libc("posix_openpt", as: IntOfInt.self)
        let grantpt = try libc("grantpt", as: IntOfInt.self)
        let unlockpt = try libc("unlockpt", as: IntOfInt.self)
        let ptsname = try libc("ptsname_r", as: (@convention(c) (Int32, UnsafeMutablePointer<CChar>, Int) -> Int32).self)
        let keyboard = openpt(O_RDWR | O_NOCTTY)
        try #require(keyboard >= 0)
        try #require(grantpt(keyboard) == 0 && unlockpt(keyboard) == 0)
        var buffer = [CChar](repeating: 0, count: 128)
        try #require(ptsname(keyboard, &buffer, buffer.count) == 0)
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let terminal = open(name, O_RDWR | O_NOCTTY)
        try #require(terminal >= 0)
        return (keyboard, terminal)
    }

    static func type(_ text: String, into fd: Int32) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }

    /// Waits until the terminal side has input to read (the line discipline works on its own time).
    static func waitReadable(_ fd: Int32) {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        _ = poll(&poller, 1, 2000)
    }

    @Test func typeAheadIsFlushedAndTheNextLineIsRead() async throws {
        let (keyboard, terminal) = try Self.pty()
        defer { close(keyboard); close(terminal) }
        var reader = TerminalLineReader(fd: terminal, deadline: .now + .seconds(10))
        Self.type("123 456\n", into: keyboard)
        Self.waitReadable(terminal)
        reader.discardPending()
        Self.type("alice\n", into: keyboard)
        #expect(await reader.nextLine() == "alice")
    }

    @Test func withoutAFlushTypeAheadIsTheNextLine() async throws {
        let (keyboard, terminal) = try Self.pty()
        defer { close(keyboard); close(terminal) }
        var reader = TerminalLineReader(fd: terminal, deadline: .now + .seconds(10))
        Self.type("123 456\n", into: keyboard)
        Self.waitReadable(terminal)
        Self.type("alice\n", into: keyboard)
        #expect(await reader.nextLine() == "123 456")
    }

    /// A line typed together with the one read (left in the terminal's queue, or in the reader's buffer) is dropped too.
    @Test func readButUnreturnedLinesAreDropped() async throws {
        let (keyboard, terminal) = try Self.pty()
        defer { close(keyboard); close(terminal) }
        var reader = TerminalLineReader(fd: terminal, deadline: .now + .seconds(10))
        Self.type("first\nsecond\n", into: keyboard)
        Self.waitReadable(terminal)
        #expect(await reader.nextLine() == "first")
        reader.discardPending()
        Self.type("third\n", into: keyboard)
        #expect(await reader.nextLine() == "third")
    }
}

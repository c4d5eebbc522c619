#if canImport(Glibc)
import Glibc
#endif

/// Lines typed on a terminal (first contact, `blerecv --ask`), read without blocking a thread:
/// it looks at the descriptor, and sleeps between looks, so the receiver's loop and Swift's few
/// cooperative threads keep running while the user thinks.
struct TerminalLineReader: LineSource {
    private let fd: Int32
    /// After this, no more lines: the user's time is up.
    private let deadline: ContinuousClock.Instant
    private var buffer: [UInt8] = []
    private var atEnd = false

    init(fd: Int32 = 0, deadline: ContinuousClock.Instant) {
        self.fd = fd
        self.deadline = deadline
    }

    /// Throws away input typed ahead: what the terminal holds (`tcflush(TCIFLUSH)`) and what was
    /// read but not returned yet. Not a terminal (tests, a pipe): only the latter.
    mutating func discardPending() {
        _ = tcflush(fd, TCIFLUSH)
        buffer.removeAll()
    }

    /// The next line without its newline; nil at end of input, on a read error, once the
    /// deadline passed, or when the task is cancelled (its connection ended).
    mutating func nextLine() async -> String? {
        while !Task.isCancelled {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            if atEnd || ContinuousClock.now >= deadline { return nil }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&poller, 1, 0) > 0 {
                var chunk = [UInt8](repeating: 0, count: 256)
                let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count > 0 {
                    buffer += chunk.prefix(count)
                } else if count == 0 || errno != EINTR {
                    atEnd = true
                }
                continue
            }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return nil
    }
}

/// Where a prompt reads the user's answers, a line at a time (a terminal, or a script in tests).
protocol LineSource {
    /// The next line without its newline; nil when there is none and will be none.
    mutating func nextLine() async -> String?
    /// Drops whatever was typed and not read yet, so that the next line is typed after the
    /// question that reads it (called before each question).
    mutating func discardPending()
}

#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// The running receiver's side of `blerecv status`: an `AF_UNIX` stream socket
/// (`StatusSocketPath`) that answers every connection with one `status` JSON line
/// (`StatusSnapshot`) and closes it. Its own thread, blocked in `accept`; nothing is read from
/// the client. The socket is 0660 in a folder only its user (and, for the service, its group)
/// may enter; it goes away with `close()`.
final class StatusServer: @unchecked Sendable {
    enum Failure: Error, Equatable {
        /// Another receiver answers there already.
        case inUse(String)
        /// The socket could not be made (the system's reason).
        case cannot(String)
    }

    let path: String
    private let fd: Int32

    /// Serves `snapshot()` at `path` (in `folder`, made 0700 if missing). A socket left by a
    /// receiver that is gone is replaced; one that answers is not.
    init(folder: String, path: String, snapshot: @escaping @Sendable () -> String) throws(Failure) {
        self.path = path
        if mkdir(folder, 0o700) != 0 && errno != EEXIST { throw .cannot("cannot make \(folder): \(String(cString: strerror(errno)))") }
        if StatusClient.answers(path) { throw .inUse(path) }
        unlink(path)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .cannot(String(cString: strerror(errno))) }
        let bound = UnixSocketAddress.with(path) { bind(fd, $0, $1) } ?? -1
        guard bound == 0, chmod(path, 0o660) == 0, listen(fd, 8) == 0 else {
            let why = String(cString: strerror(errno))
            Glibc.close(fd)
            throw .cannot("\(path): \(why)")
        }
        self.fd = fd
        let thread = Thread { [fd] in
            while true {
                let client = accept(fd, nil, nil)
                if client < 0 {
                    if errno == EINTR || errno == ECONNABORTED { continue }
                    return   // closed
                }
                var timeout = timeval(tv_sec: 2, tv_usec: 0)
                setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                let bytes = Array((snapshot() + "\n").utf8)
                var sent = 0
                while sent < bytes.count {
                    let count = bytes[sent...].withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    if count <= 0 { break }
                    sent += count
                }
                Glibc.close(client)
            }
        }
        thread.name = "blerecv status"
        thread.start()
    }

    func close() {
        unlink(path)
        shutdown(fd, Int32(SHUT_RDWR))
        Glibc.close(fd)
    }
}

/// `blerecv status`'s side: reads what the receiver at `path` says.
enum StatusClient {
    /// What asking at `path` gave.
    enum Answer: Equatable {
        case line(String)
        /// Nobody answers there.
        case none
        /// A receiver may be there, but this user may not ask it (the service's, 0750).
        case notAllowed
    }

    /// The receiver's line, or nil when none answers there.
    static func read(_ path: String) -> String? {
        if case .line(let line) = ask(path) { return line }
        return nil
    }

    static func ask(_ path: String) -> Answer {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return .none }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 3, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard UnixSocketAddress.with(path, { connect(fd, $0, $1) }) == 0 else { return errno == EACCES ? .notAllowed : .none }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while bytes.count < 1 << 20 {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            bytes += buffer.prefix(count)
        }
        return bytes.isEmpty ? .none : .line(String(decoding: bytes, as: UTF8.self))
    }

    /// Whether a receiver answers at `path` (connect succeeds).
    static func answers(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return UnixSocketAddress.with(path, { connect(fd, $0, $1) }) == 0
    }
}

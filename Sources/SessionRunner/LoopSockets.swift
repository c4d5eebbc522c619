import Glibc
import Pipeline
import SocketIO

/// The driver's own descriptors for sockets a transport handed over: duplicates (`dup`), so that
/// the transport may close its descriptors at any moment without the loop ever reading or writing
/// a number the process has since given to another file. Closing these only drops the loop's
/// reference; the socket ends when the transport has closed its own too.
final class LoopSockets {
    let inbound: Int32
    /// The same descriptor as `inbound` when one socket carries both directions (L2CAP).
    let outbound: Int32
    private let given: DatagramSockets
    private let identities: [FileIdentity?]

    /// Nil when the descriptors cannot be duplicated (closed meanwhile, descriptor limit).
    init?(_ sockets: DatagramSockets) {
        let inbound = fcntl(sockets.inbound, F_DUPFD_CLOEXEC, 0)
        guard inbound >= 0 else { return nil }
        var outbound = inbound
        if sockets.outbound != sockets.inbound {
            outbound = fcntl(sockets.outbound, F_DUPFD_CLOEXEC, 0)
            guard outbound >= 0 else {
                Glibc.close(inbound)
                return nil
            }
        }
        self.inbound = inbound
        self.outbound = outbound
        given = sockets
        identities = [FileIdentity(inbound), FileIdentity(outbound)]
    }

    /// Whether the transport still holds the sockets it gave (it closes them when the link
    /// closes): the descriptors it handed over still name the same files as ours.
    var transportHoldsThem: Bool {
        FileIdentity(given.inbound) == identities[0] && FileIdentity(given.outbound) == identities[1]
    }

    deinit {
        Glibc.close(inbound)
        if outbound != inbound { Glibc.close(outbound) }
    }
}

/// Which open file a descriptor names (nil: it names none).
private struct FileIdentity: Equatable {
    let device: UInt
    let inode: UInt

    init?(_ fd: Int32) {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        device = UInt(info.st_dev)
        inode = UInt(info.st_ino)
    }
}

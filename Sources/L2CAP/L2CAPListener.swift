import Glibc
import SocketIO
import Synchronization

/// A listening LE L2CAP socket on one adapter, on a PSM the kernel picks from the LE dynamic range
/// (0x80–0xFF, open to unprivileged processes). Each `accept()` returns the next channel.
public final class L2CAPListener: Sendable {
    private struct State {
        var fd: Int32
        var closed = false
    }
    private let state: Mutex<State>
    private let waiter = FDWaiter()
    private let receiveMTU: Int

    /// The PSM peers connect to.
    public let psm: UInt16

    /// Listens on `adapter` (its own address and type). `receiveMTU` is the largest SDU we take.
    public init(adapter: BluetoothAddress, receiveMTU: Int) throws(L2CAPError) {
        let fd = try L2CAPSocket.open(boundTo: adapter, psm: 0, receiveMTU: receiveMTU)
        do throws(L2CAPError) {
            guard listen(fd, 4) == 0 else { throw .listenFailed(errno: errno) }
            guard let bound = L2CAPSocket.localAddress(fd), bound.l2_psm != 0 else { throw .listenFailed(errno: EADDRNOTAVAIL) }
            psm = UInt16(littleEndian: bound.l2_psm)
        } catch {
            Glibc.close(fd)
            throw error
        }
        state = Mutex(State(fd: fd))
        self.receiveMTU = receiveMTU
    }

    /// How long `accept` waits after running out of descriptors before it tries again.
    static let resourcePause: Duration = .milliseconds(100)

    /// The next channel a peer opened. Throws `closed` once the listener is closed (or the
    /// listening socket fails); running out of descriptors only delays it.
    public func accept() async throws(L2CAPError) -> L2CAPChannel {
        while true {
            let fd = state.withLock { $0.closed ? -1 : $0.fd }
            guard fd >= 0 else { throw .closed }
            do throws(L2CAPError) {
                if let (client, peer) = try L2CAPSocket.accept(fd) {
                    return L2CAPChannel(fd: client, peer: peer, receiveMTU: receiveMTU)
                }
            } catch .outOfResources {
                // Out of descriptors (a storm of channels held them): the listener stays readable,
                // so waiting for it would spin. Give the channels in hand a moment to close.
                try? await Task.sleep(for: Self.resourcePause)
                continue
            }
            await waiter.wait(fd: fd, forWriting: false)
        }
    }

    public func close() {
        let fd = state.withLock { s -> Int32 in
            guard !s.closed else { return -1 }
            s.closed = true
            return s.fd
        }
        guard fd >= 0 else { return }
        waiter.cancelAll()
        Glibc.close(fd)
    }

    deinit { close() }
}

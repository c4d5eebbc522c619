import Glibc
import SocketIO

/// Opens an L2CAP LE credit-based channel from one adapter to a peer's PSM.
public enum L2CAPConnector {
    /// Connects from `adapter` (our address, which picks the controller) to `peer` on `psm`,
    /// waiting at most `timeout`. Reuses the LE connection to that peer when there is one.
    public static func connect(from adapter: BluetoothAddress, to peer: BluetoothAddress, psm: UInt16,
                               receiveMTU: Int, timeout: Duration) async throws(L2CAPError) -> L2CAPChannel {
        let fd = try L2CAPSocket.open(boundTo: adapter, psm: 0, receiveMTU: receiveMTU)
        do throws(L2CAPError) {
            if try !L2CAPSocket.startConnect(fd, to: peer, psm: psm) {
                try await waitConnected(fd, timeout: timeout)
            }
        } catch {
            Glibc.close(fd)
            throw error
        }
        return L2CAPChannel(fd: fd, peer: peer, receiveMTU: receiveMTU)
    }

    private static func waitConnected(_ fd: Int32, timeout: Duration) async throws(L2CAPError) {
        let waiter = FDWaiter()
        let alarm = Task {
            try? await Task.sleep(for: timeout)
            waiter.cancelAll()
        }
        defer { alarm.cancel() }
        await waiter.wait(fd: fd, forWriting: true)
        if waiter.isCancelled { throw .timedOut }
        let error = L2CAPSocket.pendingError(fd)
        if error != 0 { throw .connectFailed(errno: error) }
    }
}

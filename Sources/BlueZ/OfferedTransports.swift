import L2CAP
import Synchronization

/// The receiver's side of the transports it offers besides GATT (`TransportChoice.table`): their
/// offers, the tasks that hand their connections to `accept()`, and each device's newest such
/// connection (to tell an old connection from a newer one, and to end it when bluetoothd says the
/// device disconnected: the kernel closes an L2CAP channel's socket then too, but the receiver must
/// not depend on that to notice).
final class OfferedTransports: Sendable {
    private let offers: [PeripheralOffer]
    private struct State {
        var newest: [String: PeerConnection] = [:]
        var accepting: [Task<Void, Never>] = []
    }
    private let state = Mutex(State())

    init(_ offers: [PeripheralOffer]) {
        self.offers = offers
    }

    /// The PSM the service publishes; nil when no L2CAP channel is offered.
    var psm: UInt16? { offers.lazy.compactMap(\.psm).first }
    /// Why no L2CAP channel is offered, when it was asked for and could not be set up.
    var unavailable: L2CAPError? { offers.lazy.compactMap(\.unavailable).first }

    /// Hands every connection the offers make to `links`, until they close.
    func start(into links: AcceptQueue<PeerConnection>) {
        let tasks = offers.compactMap(\.accept).map { accept in
            Task { [weak self] in
                while let connection = await accept() {
                    if let device = connection.device { self?.state.withLock { $0.newest[device] = connection } }
                    // (a connection the queue has no room for is closed: the receiver is stuck)
                    if !links.offer(connection) {
                        if let device = connection.device { self?.forget(connection, of: device) }
                        await connection.close()
                    }
                }
            }
        }
        state.withLock { $0.accepting += tasks }
    }

    /// The devices with a connection over an offered transport.
    var devices: Set<String> { state.withLock { Set($0.newest.keys) } }

    /// `device` disconnected: its newest connection, which is over now.
    func disconnected(_ device: String) -> PeerConnection? {
        state.withLock { $0.newest.removeValue(forKey: device) }
    }

    /// Forgets `connection` if it is `device`'s newest.
    private func forget(_ connection: PeerConnection, of device: String) {
        state.withLock { s in
            if s.newest[device] === connection { s.newest[device] = nil }
        }
    }

    /// Whether `connection` is `device`'s newest over an offered transport.
    func isNewest(_ connection: PeerConnection, of device: String) -> Bool {
        state.withLock { $0.newest[device] === connection }
    }

    /// Stops offering: closes the listeners, ends the accepting tasks.
    func close() {
        for offer in offers { offer.close() }
        let tasks = state.withLock { s -> [Task<Void, Never>] in
            defer { s.accepting.removeAll() }
            return s.accepting
        }
        for task in tasks { task.cancel() }
    }
}

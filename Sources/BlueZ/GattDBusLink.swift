import Synchronization

/// The D-Bus half of a `GattLink`: values that come as D-Bus calls or signals rather than on a
/// socket (the peer's `WriteValue` calls to the peripheral, `Value` notifications the central
/// subscribed to with `StartNotify`), and a D-Bus call as the outbound path (the peripheral's
/// `PropertiesChanged(Value)` notifications to a peer that subscribed with `StartNotify`). Once
/// either is used, the link's sockets are not handed to a driver.
final class GattDBusLink: Sendable {
    typealias Sink = GattLink.Sink

    private struct State {
        var sink: Sink?
        /// A datagram came by D-Bus, or a sink was set.
        var used = false
    }
    private let state = Mutex(State())

    /// A datagram came by D-Bus.
    func noteInbound() {
        state.withLock { $0.used = true }
    }

    /// Makes `sink` the outbound path (nil removes it).
    func setSink(_ sink: Sink?) {
        state.withLock { s in
            s.sink = sink
            if sink != nil { s.used = true }
        }
    }

    var sink: Sink? { state.withLock { $0.sink } }
    var used: Bool { state.withLock { $0.used } }

    func close() {
        state.withLock { $0.sink = nil }
    }
}

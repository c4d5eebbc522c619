/// Answers BlueZ's calls on a characteristic whose value is `.handled` (the server side of
/// org.bluez.GattCharacteristic1), as `GattApplicationExport` decodes them. A thrown
/// `DBusErrorReply` is what BlueZ gets back; any other error answers `org.freedesktop.DBus.Error.Failed`.
protocol GattCharacteristicHandler: AnyObject, Sendable {
    /// `AcquireWrite`: a socket on which each of the peer's Write Commands arrives as one datagram.
    func acquireWrite(_ options: GattRequestOptions) async throws -> AcquiredSocket
    /// `AcquireNotify`: a socket on which each datagram we send goes out as one notification.
    func acquireNotify(_ options: GattRequestOptions) async throws -> AcquiredSocket
    /// `WriteValue`: one value the peer wrote.
    func writeValue(_ value: [UInt8], options: GattRequestOptions) async throws
    /// `StartNotify`: the peer subscribed to notifications (sent as `Value` changes).
    func startNotify() async throws
    /// `StopNotify`.
    func stopNotify() async
    /// `ReadValue`.
    func readValue() async throws -> [UInt8]
}

/// The answer to `AcquireWrite` or `AcquireNotify`: bluetoothd's end of a new socket pair (the
/// connection closes our copy once the reply is sent) and the MTU.
struct AcquiredSocket: Equatable, Sendable {
    var fd: Int32
    var mtu: UInt16
}

/// How a characteristic's handler notifies: `notify` sends a value as a `Value` change of the
/// characteristic, `setNotifying` keeps its `Notifying` property.
struct GattNotifier: Sendable {
    var notify: @Sendable ([UInt8]) async throws -> Void
    var setNotifying: @Sendable (Bool) -> Void
}

import L2CAP
import Pipeline
import Synchronization

/// One connection to a peer, over whichever transport carries it: GATT through bluetoothd, or an
/// L2CAP channel. What the sender's connect and the receiver's accept return; the layers above see
/// only its `transport`.
public final class PeerConnection: Sendable {
    public let transport: any DatagramTransport
    /// The peer's D-Bus device path (`/org/bluez/hci0/dev_…`), when known.
    public let device: String?
    /// Why a sender uses GATT although the receiver offers an L2CAP channel (`auto` fell back).
    public let l2capFallback: L2CAPError?
    /// The transfer extensions the receiver lists (its extensions characteristic; 0 if it has none).
    /// Known to a sender only.
    public let receiverExtensions: UInt32
    /// Other receivers the scan that found this one saw advertising the service (device paths): a
    /// sender this receiver refuses tries them next. Known to a sender only.
    public let otherReceivers: Set<String>
    private let cleanup: @Sendable () async -> Void
    private let closed = Mutex(false)

    public init(transport: any DatagramTransport, device: String?, l2capFallback: L2CAPError? = nil, receiverExtensions: UInt32 = 0,
                otherReceivers: Set<String> = [], cleanup: @escaping @Sendable () async -> Void = {}) {
        self.otherReceivers = otherReceivers
        self.transport = transport
        self.device = device
        self.l2capFallback = l2capFallback
        self.receiverExtensions = receiverExtensions
        self.cleanup = cleanup
    }

    /// What carries the datagrams (for the log, the progress line, `--json`).
    public var transportDescription: TransportDescription { transport.transportDescription }

    /// The GATT link, when the connection is GATT.
    public var gattLink: GattLink? { transport as? GattLink }

    /// Closes the transport, then what the connection held besides (the BLE link of a sender's channel).
    public func close() async {
        let first = closed.withLock { closed in
            defer { closed = true }
            return !closed
        }
        await transport.close()
        if first { await cleanup() }
    }
}

extension BlueZ {
    /// bluetoothd's object path for the device `address` on the adapter at `adapterPath`.
    static func devicePath(adapterPath: String, address: BluetoothAddress) -> String {
        adapterPath + "/dev_" + String(address.description.map { $0 == ":" ? "_" : $0 })
    }
}

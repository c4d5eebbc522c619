/// How a sender uses the radio, as one value: which adapter, which transport, the signal-strength
/// gate and how long to look for the receiver.
public struct RadioOptions: Sendable, Equatable {
    /// "hci1"; nil: BlueZ's first adapter.
    public var adapter: String?
    public var transport: TransportChoice
    /// Receivers weaker than this (dBm) are skipped; nil: no gate. Adapters that report no RSSI pass.
    public var minimumRSSI: Int16?
    /// How long to look for the receiver (and, after a lost link, to find it again).
    public var scanTimeout: Duration

    public init(adapter: String? = nil, transport: TransportChoice = .auto, minimumRSSI: Int16? = nil,
                scanTimeout: Duration = .seconds(30)) {
        self.adapter = adapter
        self.transport = transport
        self.minimumRSSI = minimumRSSI
        self.scanTimeout = scanTimeout
    }
}

/// Which transport a sender uses (`--transport`).
public enum TransportChoice: String, Sendable, CaseIterable {
    /// An L2CAP channel when the receiver publishes a PSM and the channel opens within
    /// `GattCentral.l2capTimeout`; GATT otherwise.
    case auto
    /// An L2CAP channel or nothing.
    case l2cap
    /// GATT only, as blesend before L2CAP.
    case gatt
}

import L2CAP

/// Whether a device's link is the receiver's business, before it ends one that opened no transfer
/// channel in time (issue 31, item 1). The receiver hears of every link of its adapter; only an
/// incoming LE link of a device not paired with the adapter can be a sender (or a stranger holding
/// a slot). The user's keyboard reconnecting after sleep, a headset, the adapter's own outgoing
/// links and bonded devices are left alone.
public enum LinkStanding: Sendable, Hashable {
    /// An incoming LE link of an unpaired device, or one we know too little about to spare.
    case candidate
    /// Not ours to end.
    case spared(Reason)

    public enum Reason: String, Sendable, Hashable {
        /// BR/EDR or audio: a sender's link is LE.
        case notLowEnergy = "not an LE link"
        /// This adapter made the link.
        case outgoing = "an outgoing link of this adapter"
        /// Paired or bonded with this adapter (including a pairing that finished while it waited).
        case paired = "paired with this adapter"
    }

    /// What is known of the link: `kernel`, the adapter's links to the device's address as the
    /// kernel lists them (a dual-mode device may hold an LE and a BR/EDR link; none when the list
    /// has no entry, because the link is gone or the list could not be read); `paired`,
    /// bluetoothd's `Paired` or `Bonded`.
    public init(kernel: [AdapterLink], paired: Bool) {
        let lowEnergy = kernel.filter { if case .lowEnergy = $0.bearer { true } else { false } }
        if !kernel.isEmpty, lowEnergy.isEmpty {
            self = .spared(.notLowEnergy)
        } else if !lowEnergy.isEmpty, lowEnergy.allSatisfy(\.outgoing) {
            self = .spared(.outgoing)
        } else {
            self = paired ? .spared(.paired) : .candidate
        }
    }
}

/// What the driver tells an `AdmissionPolicy`, each with the time it happened (`handle(_:now:)`).
///
/// The policy takes the driver's word for every event and asks for no order it cannot get from
/// BlueZ: a channel may be reported before its device's link (it implies the link). Events about
/// channels or devices the policy does not know (never admitted, already closed by the policy, or
/// reported twice) are ignored: they yield no actions and change nothing, so a late report after
/// the policy's own `close` or `disconnect` is harmless.
public enum AdmissionInput: Hashable, Sendable {
    /// A device connected (an LE link came up). It holds no slot until it opens a channel.
    case linkUp(DeviceID)
    /// A device's link went down: its channels are gone with it, without actions.
    case linkDown(DeviceID)
    /// A device opened a transfer channel: the policy answers `admit` or `refuse`.
    case channelOpened(ChannelID, device: DeviceID)
    /// The channel's handshake proved the sender's key and the receiver accepts it (trusted, or
    /// approved at first contact).
    case authenticated(ChannelID, peer: PeerKeyID)
    /// The authenticated session moved forward (a record was accepted).
    case progress(ChannelID)
    /// The channel ended, however it ended.
    case channelClosed(ChannelID, outcome: ChannelOutcome)
    /// The channel's session wants to ask a person about an unknown sender (first contact).
    case promptRequested(ChannelID)
    /// The question about this channel's sender was answered (or timed out in the session). Report
    /// `authenticated` before this, or at the same instant, when the answer accepted the sender.
    case promptFinished(ChannelID)
    /// The driver wants to register the GATT application again (after bluetoothd restarted, say).
    case reregisterRequested
}

/// How a channel ended, as far as admission cares.
public enum ChannelOutcome: String, Hashable, Sendable {
    /// It ended in order (a transfer done, or a sender that left).
    case ended
    /// The handshake failed or the sender was refused (untrusted key, bad message, a person said
    /// no): before authentication this starts or lengthens the device's backoff (rule 7).
    case handshakeFailed
    /// The transport went away under it.
    case lost
}

/// How far a sender's connect has come, for progress reports and the wall-time breakdown.
public enum ConnectStep: Sendable, Equatable {
    /// A receiver's advertisement matched: connecting to this device.
    case found(device: String)
    /// The LE link is up and the receiver's services are known; the transport opens next.
    case servicesResolved
    /// Connecting to the device found failed in a way a new scan may mend: scanning again.
    case connectAttemptFailed(ConnectAttemptFailure)
}

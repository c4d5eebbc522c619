import Pipeline

/// When the receiver may register its GATT application with bluetoothd afresh
/// (`GattPeripheral.registerApplicationAgain`, the remedy for bluetoothd 5.66 no longer handing a
/// characteristic's writes over).
///
/// - Never while the peer whose silence prompted it is still connected: bluetoothd 5.66 went away
///   when the application was unregistered under a live subscriber (issue 20: a stranger that
///   subscribed and stayed silent took the system's Bluetooth daemon down).
/// - At most once per `minimumInterval`: a peer that connects, subscribes and stays silent over
///   and over would otherwise make the receiver churn its registration every handshake timeout.
public struct ApplicationRenewalPolicy: Sendable {
    public enum Decision: Equatable, Sendable {
        case renew
        /// The peer's link is still up: renewing now could take bluetoothd down.
        case skipLinkUp
        /// The last renewal was less than `minimumInterval` ago.
        case skipTooSoon
    }

    public static let minimumInterval: Duration = .seconds(60)

    private var lastRenewal: Instant?

    public init() {}

    /// Decides, and remembers a renewal it allows.
    public mutating func decide(peerConnected: Bool, now: Instant) -> Decision {
        if peerConnected { return .skipLinkUp }
        if let lastRenewal, now.duration(since: lastRenewal) < Self.minimumInterval { return .skipTooSoon }
        lastRenewal = now
        return .renew
    }
}

import Keys

/// The other side of a finished pairing step: its static key (the one to pin) and the name it
/// suggests for itself (already checked against `PairingName`).
public struct PairingPeer: Equatable, Sendable {
    public let publicKey: PublicKey
    public let name: String

    public init(publicKey: PublicKey, name: String) {
        self.publicKey = publicKey
        self.name = name
    }
}

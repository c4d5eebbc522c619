/// Why bytes from the radio are not a discovery advertisement, or why a pair key cannot be made.
/// The cases are the stable codes; compare them, not their text.
public enum DiscoveryError: Error, Equatable, Sendable {
    /// Service data that is not `DiscoveryLayout.serviceDataLength` bytes long (this many).
    case wrongLength(Int)
    /// A header byte that names no form this version knows.
    case unknownForm(UInt8)
    /// The peer's public key gives the all-zero X25519 result (a low-order point); no pair key.
    case weakPublicKey
    /// Our own secret key is not an X25519 secret key (32 bytes).
    case invalidSecretKey
}

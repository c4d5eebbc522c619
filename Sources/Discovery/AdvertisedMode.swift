import Keys

/// What a receiver's advertisement says it is open to, read without connecting (`blesend scan`).
public enum AdvertisedMode: Equatable, Sendable {
    /// Service data with the pairing header (`PairingAdvertisement`): open to `blesend pair`.
    /// `name`: the name it advertises for itself (nil when none of its bytes is a name byte);
    /// anyone can advertise any name.
    case pairing(name: String?)
    /// Private-discovery service data (`DiscoveryAdvertisement`), and whose it is to us.
    case privateDiscovery(PrivateListing)
    /// The transfer service UUID in its UUID list, or service data this version cannot read (a
    /// later layout): whose it is, and whether it takes first contact, only a connection tells.
    case plain

    /// The word `blesend scan` shows: `pairing`, `private` or `plain`.
    public var word: String {
        switch self {
        case .pairing: "pairing"
        case .privateDiscovery: "private"
        case .plain: "plain"
        }
    }
}

/// Whom a private-discovery advertisement lists, as far as we can tell.
public enum PrivateListing: Equatable, Sendable {
    /// It lists us under the key of a receiver we pinned: that receiver (a hint, not a proof:
    /// anyone can replay an advertisement, and 1 in 2^16 keys matches a slot by chance).
    case pinned(TrustStore.Peer)
    /// It lists none of the pairs of our key with a receiver we pinned.
    case nobodyWeKnow
    /// We have no key of our own, so nothing was matched.
    case unchecked
}

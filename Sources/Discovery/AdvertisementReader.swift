import Keys

/// Reads receivers' advertisements for `blesend scan`: the mode each is in and, for private
/// discovery, which of the receivers we pinned lists us (as `blesend send --private-discovery`
/// does for the one receiver it is given). The pair keys are made once, here, not per device.
public struct AdvertisementReader: Sendable {
    struct Pinned: Sendable {
        let peer: TrustStore.Peer
        let key: DiscoveryKey
    }

    /// nil: no identity of ours, so no private-discovery data is matched.
    let pinned: [Pinned]?

    /// `identity`: our key (nil if we have none). `receivers`: the receivers we pinned; one whose
    /// key gives no pair key (a low-order point) can never be listed and is left out.
    public init(identity: Identity?, receivers: [TrustStore.Peer]) {
        guard let identity else {
            pinned = nil
            return
        }
        pinned = receivers.compactMap { peer in
            (try? DiscoveryKey.forSender(identity: identity, receiver: peer.key)).map { Pinned(peer: peer, key: $0) }
        }
    }

    /// The mode of a device that advertises `serviceData` under the transfer service UUID (nil:
    /// none) and, if `listsService`, the UUID in its UUID list; nil when it does neither (not a
    /// receiver). Service data of another length, or with a header no form has, is read as a
    /// later layout's: the device is a plain receiver (as a sender's scan takes it).
    public func mode(serviceData: [UInt8]?, listsService: Bool) -> AdvertisedMode? {
        guard let serviceData else { return listsService ? .plain : nil }
        if let pairing = PairingAdvertisement.parse(serviceData) {
            return .pairing(name: pairing.name.isEmpty ? nil : pairing.name)
        }
        guard let advertisement = try? DiscoveryAdvertisement.parse(serviceData) else { return .plain }
        guard let pinned else { return .privateDiscovery(.unchecked) }
        let listing = pinned.first { advertisement.lists($0.key) }
        return .privateDiscovery(listing.map { .pinned($0.peer) } ?? .nobodyWeKnow)
    }
}

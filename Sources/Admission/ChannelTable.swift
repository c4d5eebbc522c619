import Pipeline

/// The admitted channels in the order they were admitted, oldest first. It holds at most
/// `maxLinks` channels, so a list is the right size.
struct ChannelTable: Sendable {
    private(set) var channels: [AdmittedChannel] = []

    var count: Int { channels.count }

    var unauthenticatedCount: Int { channels.count(where: { !$0.isAuthenticated }) }

    subscript(id: ChannelID) -> AdmittedChannel? {
        channels.first { $0.id == id }
    }

    /// The channel whose person is being asked, if any (there is at most one).
    var prompting: AdmittedChannel? { channels.first { $0.isPrompting } }

    /// Rule 4: the device's channel that has not authenticated, if any (at most one).
    func unauthenticated(from device: DeviceID) -> AdmittedChannel? {
        channels.first { $0.device == device && !$0.isAuthenticated }
    }

    func hasChannels(from device: DeviceID) -> Bool {
        channels.contains { $0.device == device }
    }

    /// Rule 5: the oldest channel that may be pre-empted.
    var oldestPreemptable: AdmittedChannel? { channels.first { $0.isPreemptable } }

    /// Rule 8: the authenticated channel stalled longest at `now`, if any is stalled (the oldest
    /// of equals).
    func longestStalled(now: Instant, stallTimeout: Duration) -> AdmittedChannel? {
        channels
            .compactMap { channel in channel.stallsAt(after: stallTimeout).map { (channel, $0) } }
            .filter { $0.1 <= now }
            .min { $0.1 < $1.1 }?.0
    }

    /// Rule 9: the other authenticated channels of this sender.
    func authenticated(as peer: PeerKeyID, except id: ChannelID) -> [AdmittedChannel] {
        channels.filter {
            guard $0.id != id, case .authenticated(let other, _) = $0.phase else { return false }
            return other == peer
        }
    }

    mutating func append(_ channel: AdmittedChannel) {
        channels.append(channel)
    }

    mutating func update(_ id: ChannelID, to phase: AdmittedChannel.Phase) {
        guard let index = channels.firstIndex(where: { $0.id == id }) else { return }
        channels[index].phase = phase
    }

    @discardableResult
    mutating func remove(_ id: ChannelID) -> AdmittedChannel? {
        guard let index = channels.firstIndex(where: { $0.id == id }) else { return nil }
        return channels.remove(at: index)
    }

    /// Removes every channel of the device; returns them.
    mutating func removeAll(from device: DeviceID) -> [AdmittedChannel] {
        let gone = channels.filter { $0.device == device }
        channels.removeAll { $0.device == device }
        return gone
    }
}

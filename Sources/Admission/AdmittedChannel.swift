import Pipeline

/// A channel the policy admitted, and where it stands.
struct AdmittedChannel: Sendable {
    enum Phase: Sendable {
        /// Not authenticated yet; closed at `deadline` (rule 3).
        case handshaking(deadline: Instant)
        /// A person is asked about the sender (rule 11): the handshake deadline waits, and the
        /// question's own deadline bounds it.
        case prompting(handshakeDeadline: Instant, promptDeadline: Instant)
        /// Authenticated; `lastProgress` is when it last moved forward (or authenticated).
        case authenticated(peer: PeerKeyID, lastProgress: Instant)
    }

    let id: ChannelID
    let device: DeviceID
    var phase: Phase

    var isAuthenticated: Bool {
        if case .authenticated = phase { true } else { false }
    }

    var isPrompting: Bool {
        if case .prompting = phase { true } else { false }
    }

    /// A handshaking channel that a newer one may pre-empt (rule 5): not authenticated, and not
    /// waiting for a person.
    var isPreemptable: Bool {
        if case .handshaking = phase { true } else { false }
    }

    /// When the authenticated session counts as stalled (rule 8), if it is authenticated.
    func stallsAt(after stallTimeout: Duration) -> Instant? {
        guard case .authenticated(_, let lastProgress) = phase else { return nil }
        return lastProgress.advanced(by: stallTimeout)
    }

    /// The earliest instant this channel may give its slot up by the policy's own rules: its
    /// handshake or question deadline, or when it could stall.
    func mayFreeAt(stallTimeout: Duration) -> Instant {
        switch phase {
        case .handshaking(let deadline): deadline
        case .prompting(_, let promptDeadline): promptDeadline
        case .authenticated(_, let lastProgress): lastProgress.advanced(by: stallTimeout)
        }
    }
}

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

    func hasUnauthenticated(from device: DeviceID) -> Bool {
        channels.contains { $0.device == device && !$0.isAuthenticated }
    }

    func hasChannels(from device: DeviceID) -> Bool {
        channels.contains { $0.device == device }
    }

    /// Rule 5: the oldest channel that may be pre-empted.
    var oldestPreemptable: AdmittedChannel? { channels.first { $0.isPreemptable } }

    /// Rule 8: the authenticated channel stalled longest at `now`, if any is stalled.
    func longestStalled(now: Instant, stallTimeout: Duration) -> AdmittedChannel? {
        channels
            .filter { ($0.stallsAt(after: stallTimeout)).map { $0 <= now } ?? false }
            .min { ($0.stallsAt(after: stallTimeout) ?? now) < ($1.stallsAt(after: stallTimeout) ?? now) }
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

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

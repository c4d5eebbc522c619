import Pipeline

/// What an `AdmissionPolicy` asks its driver to do. Within one answer the actions are in the order
/// they should happen: closes and disconnects first, then what they made room for, and a change
/// of advertising last.
public enum AdmissionAction: Hashable, Sendable {
    /// Serve this channel (start its session).
    case admit(ChannelID)
    /// Do not serve this channel: close it, and tell the sender why where the transport can.
    case refuse(ChannelID, AdmissionRefusal)
    /// Serve this channel only to tell its sender that no place is free (rule 12): run its
    /// handshake and answer a sender that asks with `busy`, to come back at `retryAfter` (the
    /// earliest instant a slot may come free), `ahead` senders told so before it still waiting.
    /// It holds no slot; report its end (`channelClosed`) like any channel's.
    case answerBusy(ChannelID, retryAfter: Instant, ahead: Int)
    /// Close a channel the policy had admitted (or was answering `busy`). The policy has forgotten it already.
    case close(ChannelID, ChannelCloseReason)
    /// Disconnect the device's link. The policy has forgotten the link already.
    case disconnect(DeviceID, DisconnectReason)
    /// Start (`true`) or stop (`false`) advertising: on while a slot is free, off at the cap (rule
    /// 1). Emitted only when it changes; a new policy starts with advertising on.
    case advertise(Bool)
    /// Ask the person about this channel's sender (first contact, rule 11).
    case showPrompt(ChannelID)
    /// Another question is open: refuse this channel's sender without asking (it may send again).
    case promptBusy(ChannelID)
    /// Register the GATT application again now (rule 10).
    case reregister
    /// Not yet: registering again is allowed from `allowedAt` (rule 10).
    case reregisterDeferred(allowedAt: Instant)
}

/// Why a channel was not admitted.
public enum AdmissionRefusal: Hashable, Sendable {
    /// The device failed or stayed silent in a handshake not long ago; try again from `until`.
    case backoff(until: Instant)
    /// No slot can be had now; `retryAfter` is the earliest instant a slot may come free (a
    /// handshake's deadline, a question's, or when an authenticated session could yield).
    case busy(retryAfter: Instant)
    /// The device has a channel whose sender a person is being asked about (rule 4).
    case alreadyHandshaking

    /// A stable name for logs and tests.
    public var code: String {
        switch self {
        case .backoff: "backoff"
        case .busy: "busy"
        case .alreadyHandshaking: "alreadyHandshaking"
        }
    }
}

/// Why the policy closes a channel it had admitted.
public enum ChannelCloseReason: String, Hashable, Sendable {
    /// No authentication within the handshake deadline (rule 3); the device gets backoff.
    case handshakeTimeout
    /// A newer channel took its place while every place was taken (rule 5); never an
    /// authenticated channel.
    case preempted
    /// Its device opened a newer channel while this one was still handshaking (rule 4): the
    /// sender reconnected.
    case replaced
    /// An authenticated session made no progress for `stallTimeout` while another sender waited
    /// (rule 8).
    case stalled
    /// The same sender key authenticated on a newer channel (rule 9).
    case supersededBySameKey
    /// Its first-contact question stayed open past `promptTimeout` (rule 11); the device gets
    /// backoff.
    case promptTimeout
}

/// Why the policy disconnects a device.
public enum DisconnectReason: String, Hashable, Sendable {
    /// The link opened no channel within `bareLinkTimeout` (rule 2).
    case bareLink
    /// More links than `maxKnownLinks`, and this one stood bare the longest (rule 13).
    case tooManyLinks
}

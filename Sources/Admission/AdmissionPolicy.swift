import Pipeline

/// Who the receiver serves when several senders want it at once: a pure value with a virtual
/// clock. Inputs are events with the time they happened (`handle(_:now:)`); outputs are actions
/// for the driver, and `nextDeadline`, when `handleTimers(now:)` has work. It does no I/O.
///
/// The rules (`AdmissionConfiguration` holds their numbers):
///
/// 1. **Slots.** At most `maxLinks` admitted channels. Advertising is on while a slot is free and
///    off at the cap; `advertise` is emitted when that changes. A link without a channel holds no
///    slot (see `LinkTable` for why).
/// 2. **Bare links.** A link that holds no channel for `bareLinkTimeout` (from when it came up, or
///    from when its last channel ended) is disconnected (`bareLink`). A refused channel does not
///    count as one held. While an authenticated sender is served and a slot is free, the clock
///    stands still (a second sender's discovery may wait behind the first's transfer), up to
///    `bareLinkCeiling` bare in all; rule 3 then counts from when the clock last started.
/// 3. **Handshake deadline.** A channel must authenticate within `handshakeTimeout` counted from
///    when its link or the channel appeared, whichever was first, not from when it was served;
///    otherwise it is closed (`handshakeTimeout`) and its device gets backoff. On a link that
///    held a channel before, the link counts as appearing when it last stood bare.
/// 4. **Unauthenticated channels.** At most one per device and at most `maxUnauthenticated` in
///    all. A device's newer channel replaces its older one (`replaced`: a sender that reconnected,
///    whose deadline still counts from its link), unless a person is being asked about the older
///    one (then the newer is refused, `alreadyHandshaking`).
/// 5. **Pre-emption.** A new channel that finds every slot taken, or the unauthenticated places
///    full, pre-empts the oldest handshaking channel (`preempted`), never an authenticated one,
///    nor one whose sender a person is being asked about. If there is none to pre-empt, it is
///    refused (`busy`, with the earliest instant a slot may come free).
/// 6. **Reserved slot.** Unauthenticated channels fill at most `maxLinks - 1` slots, so one is
///    always free or held by a sender that authenticated.
/// 7. **Backoff.** A failed or silent handshake (`handshakeFailed`, a handshake or question
///    deadline) refuses the device's channels for an exponentially growing time (`DeviceBackoff`);
///    authenticating forgets it.
/// 8. **Stalled sessions.** An authenticated session without `progress` for `stallTimeout` yields
///    its slot when a sender is waiting: to a new channel that finds the slots full (it is closed,
///    `stalled`, and the new one admitted), and, once stalled, at once if a channel was refused as
///    busy for want of a slot since its last progress and every slot is still taken (the one
///    stalled longest, one for each such wait: the waiter needs one slot). If nobody waits, or a
///    slot came free meanwhile, it stays.
/// 9. **Same key twice.** When a sender key authenticates on a channel while another channel
///    holds it already, the one that authenticated last wins and the other is closed
///    (`supersededBySameKey`): a sender
///    that lost its link reconnects over a new one (often from a new private address) before the
///    receiver notices the old one is dead, and its transfer resumes on the new channel; keeping
///    the older would leave the live sender waiting on a dead one.
/// 10. **Re-registration.** Registering the GATT application again is allowed once per
///    `reregisterInterval` (`ReregistrationLimiter`).
/// 11. **First contact.** One question to a person at a time. A second request while one is open
///    is answered `promptBusy` at once, not queued: a queued sender would hold a slot and an
///    unauthenticated place for minutes, the person would answer questions gone stale, and the
///    sender may simply send again (this is what `blerecv --ask` has always done). While asked
///    about, a channel's handshake deadline waits (the question has `promptTimeout`), and it is
///    not pre-empted.
/// 12. **Busy answers.** A channel refused for want of a place (rule 5's `busy`) is, while fewer
///    than `maxBusyAnswers` such channels are open and its device has none, served only to tell
///    its sender when to come back (`answerBusy`): a trusted sender learns it in an authenticated
///    message 2 instead of seeing its channel closed. Such a channel holds no slot, keeps the
///    handshake deadline of rule 3 (missed: closed and backed off, rule 7), and its end costs the
///    device nothing. Devices told so are counted in the order they were first told
///    (`WaitingSenders`): each hears how many still wait before it.
/// 13. **Links remembered.** At most `maxKnownLinks` links are kept in mind; one more disconnects
///    those that stood bare the longest (rule 2 would in time), so no stream of link reports, true
///    or not, grows the table without bound.
///
/// Events about unknown channels or devices change nothing (`AdmissionInput`). Time should not go
/// backwards; if it does nothing traps (instants saturate), the rules just see the earlier time.
public struct AdmissionPolicy: Sendable {
    public let configuration: AdmissionConfiguration
    var channels = ChannelTable()
    var links = LinkTable()
    public internal(set) var backoff: DeviceBackoff
    public internal(set) var reregistration: ReregistrationLimiter
    /// Whether the driver should be advertising; a new policy says yes.
    public internal(set) var isAdvertising = true
    /// When a channel was last refused as busy with every slot taken (rule 8: somebody is waiting).
    public internal(set) var lastBusyRefusal: Instant?
    /// Rule 12: the channels served only to say `busy`, with their devices and handshake deadlines.
    var busyAnswers: [ChannelID: (device: DeviceID, deadline: Instant)] = [:]
    /// Rule 12: the devices told `busy` that may come back.
    var waiting = WaitingSenders()

    public init(configuration: AdmissionConfiguration = .init()) {
        self.configuration = configuration
        backoff = DeviceBackoff(configuration: configuration.backoff)
        reregistration = ReregistrationLimiter(interval: configuration.reregisterInterval)
    }

    /// Takes one event at `now`; returns what the driver should do, in order.
    public mutating func handle(_ input: AdmissionInput, now: Instant) -> [AdmissionAction] {
        let wasServing = isServing
        if wasServing { links.restartClocks(now: now) }
        defer { if wasServing || isServing { links.restartClocks(now: now) } }
        var actions: [AdmissionAction]
        switch input {
        case .linkUp(let device):
            links.linkUp(device, now: now)
            actions = trimLinks()
        case .linkDown(let device):
            links.remove(device)
            _ = channels.removeAll(from: device)
            busyAnswers = busyAnswers.filter { $0.value.device != device }
            waiting.remove(device)
            actions = []
        case .channelOpened(let channel, let device):
            let opened = open(channel, from: device, now: now)
            actions = trimLinks() + opened
        case .authenticated(let channel, let peer):
            actions = authenticate(channel, as: peer, now: now)
        case .progress(let channel):
            if case .authenticated(let peer, _)? = channels[channel]?.phase {
                channels.update(channel, to: .authenticated(peer: peer, lastProgress: now))
            }
            actions = []
        case .channelClosed(let channel, _) where busyAnswers[channel] != nil:
            // Rule 12: however it ended, telling a sender to wait costs its device nothing.
            forgetBusyAnswer(channel, now: now)
            actions = []
        case .channelClosed(let channel, let outcome):
            if let closed = channels[channel] {
                if outcome == .handshakeFailed && !closed.isAuthenticated {
                    backoff.recordFailure(of: closed.device, now: now)
                }
                forget(closed, now: now)
            }
            actions = []
        case .promptRequested(let channel):
            actions = requestPrompt(channel, now: now)
        case .promptFinished(let channel):
            if case .prompting(let handshakeDeadline, _)? = channels[channel]?.phase {
                channels.update(channel, to: .handshaking(deadline: handshakeDeadline))
            }
            actions = []
        case .reregisterRequested:
            actions = [reregistration.request(now: now)]
        }
        return actions + advertisingChange()
    }

    /// Runs the deadlines due at `now`: handshakes and questions first, in the order their channels
    /// were admitted, then at most one stalled session yielding to the senders that wait (the one
    /// stalled longest), then bare links, longest bare first. Afterwards `nextDeadline` is later
    /// than `now` (or nil).
    public mutating func handleTimers(now: Instant) -> [AdmissionAction] {
        let wasServing = isServing
        if wasServing { links.restartClocks(now: now) }
        defer { if wasServing { links.restartClocks(now: now) } }
        var actions: [AdmissionAction] = []
        for channel in channels.channels {
            switch channel.phase {
            case .handshaking(let deadline) where deadline <= now:
                actions.append(.close(channel.id, .handshakeTimeout))
                backoff.recordFailure(of: channel.device, now: now)
            case .prompting(_, let promptDeadline) where promptDeadline <= now:
                actions.append(.close(channel.id, .promptTimeout))
                backoff.recordFailure(of: channel.device, now: now)
            default:
                continue
            }
            forget(channel, now: now)
        }
        for (id, lane) in busyAnswers.sorted(by: { ($0.value.deadline, $0.key.rawValue) < ($1.value.deadline, $1.key.rawValue) })
        where lane.deadline <= now {
            actions.append(.close(id, .handshakeTimeout))
            backoff.recordFailure(of: lane.device, now: now)
            forgetBusyAnswer(id, now: now)
        }
        if let stalled = channels.longestStalled(now: now, stallTimeout: configuration.stallTimeout),
           let stallsAt = stallDeadline(of: stalled), stallsAt <= now {
            actions.append(.close(stalled.id, .stalled))
            forget(stalled, now: now)
            lastBusyRefusal = nil  // the slot it freed is the waiter's; the others may stay
        }
        for device in links.expired(now: now, timeout: configuration.bareLinkTimeout, ceiling: configuration.bareLinkCeiling) {
            links.remove(device)
            actions.append(.disconnect(device, .bareLink))
        }
        return actions + advertisingChange()
    }

    /// Rule 2: whether an authenticated sender is being served while a slot is still free for a
    /// bare link's sender (the bare-link clock stands still; with every slot taken it would only
    /// be refused, so it runs).
    var isServing: Bool { channels.count < configuration.maxLinks && channels.channels.contains { $0.isAuthenticated } }

    /// Rule 13: the links beyond `maxKnownLinks`, forgotten and disconnected.
    private mutating func trimLinks() -> [AdmissionAction] {
        links.trim(to: configuration.maxKnownLinks).map { .disconnect($0, .tooManyLinks) }
    }

    /// When `handleTimers` next has work: a handshake, question or bare-link deadline, or when a
    /// stalled session must yield to a waiting sender. Nil if nothing is pending.
    public var nextDeadline: Instant? {
        let channelDeadlines = channels.channels.compactMap { channel -> Instant? in
            switch channel.phase {
            case .handshaking(let deadline): deadline
            case .prompting(_, let promptDeadline): promptDeadline
            case .authenticated: stallDeadline(of: channel)
            }
        }
        // (while serving, the clock restarts at every event: only the ceiling can come due)
        let bare = links.earliestExpiry(timeout: isServing ? configuration.bareLinkCeiling : configuration.bareLinkTimeout,
                                        ceiling: configuration.bareLinkCeiling)
        return (channelDeadlines + busyAnswers.values.map(\.deadline) + [bare].compactMap { $0 }).min()
    }

    /// Rule 8: when an authenticated channel must yield, if a sender was refused for want of a slot
    /// since its last progress and every slot is still taken; nil while nobody waits for it.
    func stallDeadline(of channel: AdmittedChannel) -> Instant? {
        guard case .authenticated(_, let lastProgress) = channel.phase,
              channels.count >= configuration.maxLinks,
              let lastBusyRefusal, lastBusyRefusal >= lastProgress else { return nil }
        return lastProgress.advanced(by: configuration.stallTimeout)
    }

    /// Drops an admitted channel the policy closed or heard closed; its device's link, if it has
    /// no other channel, stands bare from `now`.
    mutating func forget(_ channel: AdmittedChannel, now: Instant) {
        channels.remove(channel.id)
        standBareIfIdle(channel.device, now: now)
    }

    /// Rule 12: drops a channel that was served only to say `busy`.
    mutating func forgetBusyAnswer(_ id: ChannelID, now: Instant) {
        guard let lane = busyAnswers.removeValue(forKey: id) else { return }
        standBareIfIdle(lane.device, now: now)
    }

    /// A device that holds no channel any more stands bare from `now` (rule 2).
    private mutating func standBareIfIdle(_ device: DeviceID, now: Instant) {
        guard !channels.hasChannels(from: device), !busyAnswers.values.contains(where: { $0.device == device }) else { return }
        links.becameBare(device, now: now)
    }

    /// Rule 1: `advertise` when whether a slot is free changed.
    mutating func advertisingChange() -> [AdmissionAction] {
        let wanted = channels.count < configuration.maxLinks
        guard wanted != isAdvertising else { return [] }
        isAdvertising = wanted
        return [.advertise(wanted)]
    }
}

/// What the driver (and tests) may read.
extension AdmissionPolicy {
    /// Where an admitted channel stands.
    public enum ChannelStatus: Hashable, Sendable {
        case handshaking
        case prompting
        case authenticated(PeerKeyID)
    }

    /// The admitted channel's status; nil for a channel the policy does not hold.
    public func status(of channel: ChannelID) -> ChannelStatus? {
        switch channels[channel]?.phase {
        case .handshaking?: .handshaking
        case .prompting?: .prompting
        case .authenticated(let peer, _)?: .authenticated(peer)
        case nil: nil
        }
    }

    /// The admitted channels, oldest first.
    public var admittedChannels: [ChannelID] { channels.channels.map(\.id) }
    /// How many slots are taken (rule 1).
    public var slotsInUse: Int { channels.count }
    /// How many admitted channels have not authenticated (rules 4 and 6).
    public var unauthenticatedCount: Int { channels.unauthenticatedCount }
    /// The channel whose sender a person is being asked about (rule 11).
    public var openPrompt: ChannelID? { channels.prompting?.id }
    /// The devices linked, holding a channel or not.
    public var linkedDevices: Set<DeviceID> { Set(links.links.keys) }
    /// The channels served only to say `busy` (rule 12).
    public var busyAnswerChannels: Set<ChannelID> { Set(busyAnswers.keys) }
    /// How many devices told `busy` may still come back (rule 12).
    public var waitingDevices: Int { waiting.count }
}

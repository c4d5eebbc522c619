import Pipeline

/// The channel rules: admission (1, 3-7, 8 for a newcomer), authentication (7, 9) and first
/// contact (11).
extension AdmissionPolicy {
    /// Where a new channel goes, when it is not refused outright.
    enum Placement {
        /// A slot and an unauthenticated place are free.
        case free
        /// It takes the place of the oldest handshaking channel (rule 5).
        case preempting(AdmittedChannel)
        /// It takes the slot of the session stalled longest (rule 8).
        case displacingStalled(AdmittedChannel)
        /// No place can be had (rule 5).
        case busy
    }

    mutating func open(_ id: ChannelID, from device: DeviceID, now: Instant) -> [AdmissionAction] {
        guard channels[id] == nil, busyAnswers[id] == nil else { return [] }
        let handshakeStart = links.channelAppeared(from: device, now: now)
        if let until = backoff.backoffEnd(for: device, now: now) {
            return [.refuse(id, .backoff(until: until))]
        }
        var actions: [AdmissionAction] = []
        var deadline = handshakeStart.advanced(by: configuration.handshakeTimeout)
        if let older = channels.unauthenticated(from: device) {
            // Rule 4: one handshake per device. A sender that reconnects (a new L2CAP channel
            // after its GATT attempt, a restarted program) replaces its own older handshake; its
            // deadline still counts from the link, so replacing buys no time. A channel whose
            // sender a person is being asked about stays.
            guard older.isPreemptable else { return [.refuse(id, .alreadyHandshaking)] }
            if case .handshaking(let olderDeadline) = older.phase { deadline = min(deadline, olderDeadline) }
            actions.append(.close(older.id, .replaced))
            forget(older, now: now)
        }
        switch placement(now: now) {
        case .free:
            break
        case .preempting(let oldest):
            actions.append(.close(oldest.id, .preempted))
            forget(oldest, now: now)
        case .displacingStalled(let stalled):
            actions.append(.close(stalled.id, .stalled))
            forget(stalled, now: now)
        case .busy:
            // Rule 8 counts only senders waiting for a slot: a stalled session's slot would not
            // help one waiting for an unauthenticated place.
            if channels.count >= configuration.maxLinks { lastBusyRefusal = now }
            let retryAt = retryAfter(now: now)
            // Rule 12: told so in its handshake, if a place for that is free.
            guard busyAnswers.count < configuration.maxBusyAnswers, !busyAnswers.values.contains(where: { $0.device == device }) else {
                return actions + [.refuse(id, .busy(retryAfter: retryAt))]
            }
            busyAnswers[id] = (device, deadline)
            links.occupied(device)
            return actions + [.answerBusy(id, retryAfter: retryAt, ahead: waiting.told(device, now: now, retryAt: retryAt))]
        }
        channels.append(AdmittedChannel(id: id, device: device, phase: .handshaking(deadline: deadline)))
        links.occupied(device)
        waiting.remove(device)
        return actions + [.admit(id)]
    }

    /// Rules 1, 4, 5, 6 and 8: room for one more unauthenticated channel, and how.
    func placement(now: Instant) -> Placement {
        let slotsFull = channels.count >= configuration.maxLinks
        let unauthenticatedFull = channels.unauthenticatedCount >= configuration.unauthenticatedCap
        if !slotsFull && !unauthenticatedFull { return .free }
        if let oldest = channels.oldestPreemptable { return .preempting(oldest) }
        if !unauthenticatedFull,
           let stalled = channels.longestStalled(now: now, stallTimeout: configuration.stallTimeout) {
            return .displacingStalled(stalled)
        }
        return .busy
    }

    /// The earliest instant after `now` a slot may come free by the policy's own rules (a
    /// handshake or question deadline, or when a session could stall); `handshakeTimeout` from now
    /// if none is later than now.
    func retryAfter(now: Instant) -> Instant {
        channels.channels
            .map { $0.mayFreeAt(stallTimeout: configuration.stallTimeout) }
            .filter { $0 > now }
            .min() ?? now.advanced(by: configuration.handshakeTimeout)
    }

    mutating func authenticate(_ id: ChannelID, as peer: PeerKeyID, now: Instant) -> [AdmissionAction] {
        guard let channel = channels[id], !channel.isAuthenticated else { return [] }
        var actions: [AdmissionAction] = []
        for older in channels.authenticated(as: peer, except: id) {
            actions.append(.close(older.id, .supersededBySameKey))
            forget(older, now: now)
        }
        channels.update(id, to: .authenticated(peer: peer, lastProgress: now))
        backoff.forget(channel.device)
        return actions
    }

    mutating func requestPrompt(_ id: ChannelID, now: Instant) -> [AdmissionAction] {
        guard let channel = channels[id], case .handshaking(let deadline) = channel.phase else { return [] }
        if channels.prompting != nil { return [.promptBusy(id)] }
        let promptDeadline = now.advanced(by: configuration.promptTimeout)
        channels.update(id, to: .prompting(handshakeDeadline: deadline, promptDeadline: promptDeadline))
        return [.showPrompt(id)]
    }
}

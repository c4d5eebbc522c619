import Pipeline

/// The devices linked to the receiver, and since when each has stood without a channel.
///
/// A link holds no slot (rule 1 counts channels): the kernel accepts an LE link before anyone
/// hears of it, so the policy cannot refuse one, only end it. A link without a channel is bounded
/// by time instead (rule 2), and counting such links against the slots would let anyone who merely
/// connects switch advertising off for everyone.
struct LinkTable: Sendable {
    struct Link: Sendable {
        /// Since when the device has held no admitted channel (nil while it holds one): when the
        /// link came up, or when its last channel ended.
        var bareSince: Instant?
        /// Rule 2's clock, and rule 3's start: `bareSince`, moved on while the receiver serves a
        /// sender (`restartClocks`).
        var countedFrom: Instant?

        init(bareSince: Instant?) {
            self.bareSince = bareSince
            countedFrom = bareSince
        }
    }

    private(set) var links: [DeviceID: Link] = [:]

    var count: Int { links.count }

    func isLinked(_ device: DeviceID) -> Bool { links[device] != nil }

    /// A link came up; a device already known keeps its times.
    mutating func linkUp(_ device: DeviceID, now: Instant) {
        if links[device] == nil { links[device] = Link(bareSince: now) }
    }

    /// The device opened a channel at `now` (which implies its link, if that was not reported
    /// yet). Returns when the channel's handshake time starts (rule 3): when the link stood bare
    /// from, if it did, else `now`.
    mutating func channelAppeared(from device: DeviceID, now: Instant) -> Instant {
        guard let link = links[device] else {
            links[device] = Link(bareSince: now)
            return now
        }
        return min(link.countedFrom ?? now, now)
    }

    /// The device holds an admitted channel.
    mutating func occupied(_ device: DeviceID) {
        if links[device] != nil { links[device] = Link(bareSince: nil) }
    }

    /// The device's last channel ended at `now`: its link stands bare from now.
    mutating func becameBare(_ device: DeviceID, now: Instant) {
        if links[device] != nil { links[device] = Link(bareSince: now) }
    }

    @discardableResult
    mutating func remove(_ device: DeviceID) -> Link? {
        links.removeValue(forKey: device)
    }

    /// Rule 13: with more than `limit` links known, the ones bare the longest, removed (by time,
    /// then by name). Links that hold a channel stay.
    mutating func trim(to limit: Int) -> [DeviceID] {
        guard links.count > limit else { return [] }
        let victims = links.compactMap { device, link in link.bareSince.map { ($0, device) } }
            .sorted { ($0.0, $0.1.rawValue) < ($1.0, $1.1.rawValue) }
            .prefix(links.count - limit)
            .map(\.1)
        for device in victims { links.removeValue(forKey: device) }
        return victims
    }

    /// Rule 2: every bare link's clock starts again at `now` (the receiver served a sender until now).
    mutating func restartClocks(now: Instant) {
        for device in links.keys where links[device]?.bareSince != nil { links[device]?.countedFrom = now }
    }

    /// Rule 2: the bare links whose time ran out at `now` (`timeout` on their clock, or `ceiling`
    /// since they stood bare), longest bare first (then by name, so the order does not depend on hashing).
    func expired(now: Instant, timeout: Duration, ceiling: Duration) -> [DeviceID] {
        links.compactMap { device, link -> (Instant, DeviceID)? in
            guard let bareSince = link.bareSince, let expiry = Self.expiry(of: link, timeout: timeout, ceiling: ceiling),
                  expiry <= now else { return nil }
            return (bareSince, device)
        }
        .sorted { ($0.0, $0.1.rawValue) < ($1.0, $1.1.rawValue) }
        .map(\.1)
    }

    /// The earliest instant a bare link's time runs out.
    func earliestExpiry(timeout: Duration, ceiling: Duration) -> Instant? {
        links.values.compactMap { Self.expiry(of: $0, timeout: timeout, ceiling: ceiling) }.min()
    }

    private static func expiry(of link: Link, timeout: Duration, ceiling: Duration) -> Instant? {
        guard let bareSince = link.bareSince else { return nil }
        return min((link.countedFrom ?? bareSince).advanced(by: timeout), bareSince.advanced(by: ceiling))
    }
}

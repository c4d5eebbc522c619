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
        return min(link.bareSince ?? now, now)
    }

    /// The device holds an admitted channel.
    mutating func occupied(_ device: DeviceID) {
        if links[device] != nil { links[device]?.bareSince = nil }
    }

    /// The device's last channel ended at `now`: its link stands bare from now.
    mutating func becameBare(_ device: DeviceID, now: Instant) {
        if links[device] != nil { links[device]?.bareSince = now }
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

    /// Rule 2: the bare links whose time ran out at `now`, longest bare first (then by name, so
    /// the order does not depend on hashing).
    func expired(now: Instant, timeout: Duration) -> [DeviceID] {
        links.compactMap { device, link -> (Instant, DeviceID)? in
            guard let bareSince = link.bareSince, bareSince.advanced(by: timeout) <= now else { return nil }
            return (bareSince, device)
        }
        .sorted { ($0.0, $0.1.rawValue) < ($1.0, $1.1.rawValue) }
        .map(\.1)
    }

    /// The earliest instant a bare link's time runs out.
    func earliestExpiry(timeout: Duration) -> Instant? {
        links.values.compactMap { $0.bareSince?.advanced(by: timeout) }.min()
    }
}

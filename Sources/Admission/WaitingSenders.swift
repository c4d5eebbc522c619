import Pipeline

/// Rule 12: the devices told `busy`, in the order they were first told, while they may still come
/// back. What a newcomer hears as "n ahead" is how many of them were told before it.
///
/// A device is forgotten once it is admitted, once the time it was told to wait has passed by
/// `margin` without it coming back, or, past `capacity` devices, the one that would be forgotten
/// soonest. Who is served next is not decided here: the count only tells a waiting sender where
/// it stands.
struct WaitingSenders: Sendable {
    struct Entry: Sendable {
        /// When the device was first told, and an order that breaks ties between equal instants.
        var firstTold: Instant
        var order: UInt64
        /// When it is forgotten unless told again.
        var forgetAt: Instant
    }

    static let capacity = 64
    /// How long after the time it was told a device may take to come back.
    static let margin: Duration = .seconds(30)

    private(set) var entries: [DeviceID: Entry] = [:]
    private var nextOrder: UInt64 = 0

    /// The device is told `busy` at `now` and to come back at `retryAt`; returns how many devices
    /// told before it still wait.
    mutating func told(_ device: DeviceID, now: Instant, retryAt: Instant) -> Int {
        entries = entries.filter { $0.value.forgetAt > now }
        let forgetAt = max(retryAt, now).advanced(by: Self.margin)
        if var entry = entries[device] {
            entry.forgetAt = forgetAt
            entries[device] = entry
        } else {
            entries[device] = Entry(firstTold: now, order: nextOrder, forgetAt: forgetAt)
            nextOrder &+= 1
            if entries.count > Self.capacity, let soonest = entries.min(by: { $0.value.forgetAt < $1.value.forgetAt })?.key {
                entries[soonest] = nil
            }
        }
        guard let mine = entries[device] else { return entries.count }
        return entries.values.filter { ($0.firstTold, $0.order) < (mine.firstTold, mine.order) }.count
    }

    /// The device got a slot (or its link went): it no longer waits.
    mutating func remove(_ device: DeviceID) {
        entries[device] = nil
    }

    var count: Int { entries.count }
}

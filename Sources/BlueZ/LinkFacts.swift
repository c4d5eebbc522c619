import DBus

/// What bluetoothd says of a device whose link came up, as far as admission cares: whether the
/// link can be a sender's (issue 31). blesend never pairs, so a device paired or bonded with this
/// machine (the user's keyboard, mouse or headset coming back after sleep, a phone paired for
/// calls) is none of a receiver's business: its link is left to bluetoothd, never counted or
/// disconnected as a bare link. What bluetoothd did not say counts as a possible sender, so a
/// failed look-up never lets a stranger hold a link.
public struct LinkFacts: Sendable, Equatable {
    /// `Device1.Paired` and `Device1.Bonded`; nil when not known.
    public var paired: Bool?
    public var bonded: Bool?

    public init(paired: Bool?, bonded: Bool?) {
        self.paired = paired
        self.bonded = bonded
    }

    /// From `Device1`'s properties (`GetAll`), or nothing known when the look-up failed.
    public init(device properties: [String: DBusValue]?) {
        self.init(paired: properties?["Paired"]?.bool, bonded: properties?["Bonded"]?.bool)
    }

    /// Whether the link may be a sender's, and so admission's business.
    public var mayBeSender: Bool { paired != true && bonded != true }
}

/// The numbers an `AdmissionPolicy` enforces. Every value has a default that `blerecv` uses; the
/// initializer clamps values that would make the rules contradict each other (see each property).
public struct AdmissionConfiguration: Hashable, Sendable {
    /// How many transfer channels the receiver serves at once by default. Measured in the lab
    /// (bumble's controllers, `Tests/Lab/senders.sh`, both images): two senders at once each took
    /// 1.2–1.8 × their time alone, together 1.0–1.3 × the goodput of one: the senders share one
    /// radio, so a place more buys no throughput. Two places serve two senders; the third keeps
    /// room for one more handshake while both run (a stranger's, which is never given the place of
    /// an authenticated sender, or the next sender's, to be told `busy`). And on those controllers
    /// bluetoothd gave no third advertisement instance with two links up, so more places would
    /// mostly be reached over links already up.
    public static let defaultMaxLinks = 3

    /// Rule 1: the most transfer channels admitted at once (the slots). At least 2, so that rule 6
    /// (one slot kept for peers that authenticate) leaves room for a stranger's handshake.
    public let maxLinks: Int
    /// Rule 4: the most unauthenticated channels at once, over all devices. At least 1.
    public let maxUnauthenticated: Int
    /// Rule 2: how long a link may stand without a channel before it is disconnected. 8 s: an
    /// honest sender opens its channel within a second or two of connecting on a radio, but in the
    /// lab (emulated CPUs, a receiver busy with another sender) service discovery alone took over
    /// 5 s, and a sender cut off as a bare link starts over.
    public let bareLinkTimeout: Duration
    /// Rule 2: while the receiver serves an authenticated sender, a bare link's clock stands
    /// still (in the lab a second sender's service discovery waited behind the first's transfer
    /// and its link was cut as bare, twice in a row, issue 30); this is the most a link may stand
    /// bare all the same. At least `bareLinkTimeout`.
    public let bareLinkCeiling: Duration
    /// Rule 3: how long a channel has to authenticate, counted from when its link or the channel
    /// appeared, whichever was first. The same 10 s as the session's own handshake timeout.
    public let handshakeTimeout: Duration
    /// Rule 11: the longest a first-contact question may stay open before the policy closes its
    /// channel. The session asks for 2 minutes (`SessionConfiguration.approvalTimeout`) and ends the
    /// channel itself; this bound (its 120 s plus the sender's 10 s margin) only holds a slot
    /// against a driver that never reports the end.
    public let promptTimeout: Duration
    /// Rule 8: how long an authenticated session may go without progress before it yields its slot
    /// to a sender that waits.
    public let stallTimeout: Duration
    /// Rule 7: the per-device backoff after a failed or silent handshake.
    public let backoff: BackoffConfiguration
    /// Rule 10: the least time between two registrations of the GATT application.
    public let reregisterInterval: Duration
    /// Rule 12: how many channels may be open at once only to tell their senders `busy`, beyond
    /// the slots. Each costs a handshake (one key agreement more than a refusal) for at most
    /// `handshakeTimeout`; 0 closes such channels unanswered.
    public let maxBusyAnswers: Int
    /// Rule 13: the most links kept in mind at once (a link holds no slot until it opens a
    /// channel, and rule 2 ends a bare one within `bareLinkTimeout`). At least `maxLinks +
    /// maxBusyAnswers + 1`, so that the links of every channel and of one newcomer fit.
    public let maxKnownLinks: Int

    public init(maxLinks: Int = defaultMaxLinks, maxUnauthenticated: Int = 2,
                bareLinkTimeout: Duration = .seconds(8), bareLinkCeiling: Duration = .seconds(30), handshakeTimeout: Duration = .seconds(10),
                promptTimeout: Duration = .seconds(130), stallTimeout: Duration = .seconds(15),
                backoff: BackoffConfiguration = .init(), reregisterInterval: Duration = .seconds(10), maxBusyAnswers: Int = 1,
                maxKnownLinks: Int = 64) {
        self.maxLinks = max(2, maxLinks)
        self.maxUnauthenticated = max(1, maxUnauthenticated)
        self.bareLinkTimeout = max(.zero, bareLinkTimeout)
        self.bareLinkCeiling = max(self.bareLinkTimeout, bareLinkCeiling)
        self.handshakeTimeout = max(.zero, handshakeTimeout)
        self.promptTimeout = max(.zero, promptTimeout)
        self.stallTimeout = max(.zero, stallTimeout)
        self.backoff = backoff
        self.reregisterInterval = max(.zero, reregisterInterval)
        self.maxBusyAnswers = max(0, maxBusyAnswers)
        self.maxKnownLinks = max(self.maxLinks + self.maxBusyAnswers + 1, maxKnownLinks)
    }

    /// Rules 4 and 6: the most unauthenticated channels at once, `min(maxUnauthenticated,
    /// maxLinks - 1)`, so that at least one slot stays for a peer that authenticates.
    public var unauthenticatedCap: Int { min(maxUnauthenticated, maxLinks - 1) }
}

/// Rule 7's numbers: after the n-th failed or silent handshake in a row, a device's channels are
/// refused for `min(base · 2^(n-1), cap)`.
public struct BackoffConfiguration: Hashable, Sendable {
    /// The first backoff.
    public let base: Duration
    /// The longest backoff.
    public let cap: Duration
    /// How many devices are remembered; past this the one whose last failure is oldest is
    /// forgotten, so a stream of new addresses costs bounded memory. At least 1.
    public let rememberedDevices: Int

    public init(base: Duration = .seconds(2), cap: Duration = .seconds(60), rememberedDevices: Int = 256) {
        self.base = max(.zero, base)
        self.cap = max(self.base, cap)
        self.rememberedDevices = max(1, rememberedDevices)
    }
}

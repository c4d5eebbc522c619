import Pipeline
import Transfer

/// What the layers of a session's stack tell each other through `LayerStack`, and what the
/// session learns from them (docs/architecture.md, "Signals").
enum StackSignal: Equatable {
    /// Raised by the secure channel: the peer proved its key (message 2 read, or sent to a trusted
    /// or just approved sender). The link lifts its pre-authentication limits.
    case peerAuthenticated
    /// Raised by the receiver's secure channel at the first record it opens from the peer (at
    /// `at`): proof that the peer holds this session's keys, which a replayed message 1 cannot
    /// give. Until then the receiver's link counts no frame as the peer's progress.
    case peerProvedLive(at: Instant)
    /// Raised by the layer that waits for a person's answer at first contact (the receiver's
    /// channel, the sender's transfer layer): the wait lasts until `until`, or is over (nil). The
    /// link keeps the connection up that long, and a little more for the answer's trip.
    case approvalPending(until: Instant?)
    /// Raised by the session: the link's datagram sizes changed (a socket was acquired again).
    /// The link cuts frames to the new size, the sender's transfer layer its records.
    case datagramSizeChanged(own: Int, peer: Int?)
    /// Raised by the receiving session: the file in progress failed for good (`FileFailure`); its
    /// partial is removed now instead of waiting for a resume.
    case abandonFile(FileFailure)
}

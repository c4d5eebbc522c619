import Framing

/// Knobs of one endpoint; the defaults are the protocol's constants (docs/protocol.md).
public struct SessionConfiguration: Sendable {
    public var link: LinkConfiguration
    /// A receiver drops a connection whose handshake has not finished by then; a sender gives up
    /// on a device that has not answered message 1 by then.
    public var handshakeTimeout: Duration
    /// Records per key before rekeying.
    public var rekeyAfterRecords: UInt64
    /// A connection on which nothing arrives for this long is treated as lost (a peer that holds
    /// the link but stopped talking). The framing layer alone cannot tell when it has nothing in flight.
    public var idleTimeout: Duration
    /// First contact (`--ask`, docs/protocol.md §8.5): how long the receiver's user has to accept
    /// an unknown sender. The sender waits `approvalTimeout + approvalMargin`, and while the answer
    /// is pending neither side's idle timeout drops the link before that.
    public var approvalTimeout: Duration
    /// A receiver keeps an interrupted file (or folder) this long after its last activity for its
    /// sender to resume; never removes one a live connection is receiving, however old.
    public var partialLifetime: Duration

    /// What the sender waits for the receiver's answer beyond `approvalTimeout` (the answer's trip).
    public static let approvalMargin = Duration.seconds(10)
    /// Pairing (docs/protocol.md §9): how long a side waits for the answer to P2 (P3) and to P3
    /// (P4) once the code is in. No person is asked in between: only a key is written.
    public static let pairingAnswerTimeout = Duration.seconds(30)

    public init(link: LinkConfiguration = .init(), handshakeTimeout: Duration = .seconds(10),
                rekeyAfterRecords: UInt64 = 65_536, idleTimeout: Duration = .seconds(30),
                approvalTimeout: Duration = .seconds(120), partialLifetime: Duration = .seconds(600)) {
        self.approvalTimeout = approvalTimeout
        self.partialLifetime = partialLifetime
        self.link = link
        self.handshakeTimeout = handshakeTimeout
        self.rekeyAfterRecords = rekeyAfterRecords
        self.idleTimeout = idleTimeout
    }
}




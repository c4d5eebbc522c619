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

    public init(link: LinkConfiguration = .init(), handshakeTimeout: Duration = .seconds(10),
                rekeyAfterRecords: UInt64 = 65_536, idleTimeout: Duration = .seconds(30)) {
        self.link = link
        self.handshakeTimeout = handshakeTimeout
        self.rekeyAfterRecords = rekeyAfterRecords
        self.idleTimeout = idleTimeout
    }
}




import Framing

/// Knobs of one endpoint; the defaults are the protocol's constants (docs/protocol.md).
public struct SessionConfiguration: Sendable {
    public var link: LinkConfiguration
    /// A receiver drops a connection whose handshake has not finished by then.
    public var handshakeTimeout: Duration
    /// Records per key before rekeying.
    public var rekeyAfterRecords: UInt64

    public init(link: LinkConfiguration = .init(), handshakeTimeout: Duration = .seconds(10), rekeyAfterRecords: UInt64 = 65_536) {
        self.link = link
        self.handshakeTimeout = handshakeTimeout
        self.rekeyAfterRecords = rekeyAfterRecords
    }
}




import Pipeline

/// The sender as the drivers see it (`DatagramEndpoint`): complete once finished, settled once
/// nothing is left to acknowledge.
extension SenderSession: DatagramEndpoint {
    public typealias Failure = SessionError

    public var status: ConnectionStatus {
        guard isFinished else { return .running }
        return isLinkIdle ? .settled : .complete
    }

    public mutating func linkResized(maxDatagramSize: Int, peerMaxDatagramSize: Int) {
        setMaxDatagramSize(maxDatagramSize, peer: peerMaxDatagramSize)
    }
}

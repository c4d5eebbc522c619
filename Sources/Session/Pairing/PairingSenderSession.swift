import Keys
import Pairing
import Pipeline
import Sodium

/// The pairing sender, sans-IO (`blesend pair`, docs/protocol.md §9): one connection,
///
///     PairingInitiatorLayer  (CPace, then the static keys under its key)
///     LinkLayer              (framing and ARQ; datagrams)
///
/// Complete once P4 is read: the receiver has pinned our key, and `paired` says whose key to
/// pin here. Any failure (a wrong code, a receiver that is busy or not pairing, a timeout) is
/// thrown and leaves nothing to pin.
public struct PairingSenderSession {
    public enum Event: Equatable, Sendable {
        /// P4 read: pin `receiver` now.
        case paired(receiver: PairingPeer)
    }

    typealias Stack = LayerStack<PairingInitiatorLayer, LinkLayer>

    private var stack: Stack
    private var told = false

    /// `identity` and `name` are ours (the name is a suggestion for the receiver's trust entry);
    /// `code` is what the user typed.
    public init(identity: Identity, name: String, code: PairingPasscode, maxDatagramSize: Int, peerMaxDatagramSize: Int? = nil,
                now: Instant, configuration: SessionConfiguration = .init(),
                random: @escaping PairingRandomSource = Random.bytes) throws(SessionError) {
        let initiator: PairingInitiator
        do {
            initiator = try PairingInitiator(identity: identity, name: name, code: code, random: random)
        } catch {
            throw .pairing(error)
        }
        let layer = PairingInitiatorLayer(initiator: initiator, now: now, handshakeTimeout: configuration.handshakeTimeout,
                                          answerTimeout: SessionConfiguration.pairingAnswerTimeout)
        let link = LinkLayer(configuration: configuration, maxDatagramSize: maxDatagramSize, peerMaxDatagramSize: peerMaxDatagramSize,
                             fillsWindow: false, now: now)
        stack = layer.stacked(on: link)
        try? stack.passDown(now: now)
    }

    /// The receiver, once paired.
    public var receiver: PairingPeer? {
        guard case .paired(let peer)? = stack.layer(PairingInitiatorLayer.self)?.stage else { return nil }
        return peer
    }
}

extension PairingSenderSession: DatagramEndpoint {
    public typealias Failure = SessionError

    public mutating func nextDatagram(now: Instant) throws(SessionError) -> [UInt8]? { try stack.nextDown(now: now) }
    public mutating func receive(datagram: [UInt8], now: Instant) throws(SessionError) { try stack.receive(datagram, now: now) }
    public mutating func handleTimers(now: Instant) throws(SessionError) { try stack.handleTimers(now: now) }
    public var nextDeadline: Instant? { stack.nextDeadline }

    public var status: ConnectionStatus {
        guard receiver != nil else { return .running }
        return stack.layer(LinkLayer.self)?.link.isIdle ?? true ? .settled : .complete
    }

    public mutating func takeEvents() -> [Event] {
        guard !told, let receiver else { return [] }
        told = true
        return [.paired(receiver: receiver)]
    }

    public mutating func linkResized(maxDatagramSize: Int, peerMaxDatagramSize: Int) {
        stack.handle(.datagramSizeChanged(own: maxDatagramSize, peer: peerMaxDatagramSize))
    }
}

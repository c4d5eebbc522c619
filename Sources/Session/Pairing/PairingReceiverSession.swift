import Keys
import Pairing
import Pipeline
import Sodium

/// The pairing receiver, sans-IO (`blerecv pair`, docs/protocol.md §9): one connection,
///
///     PairingResponderLayer  (CPace, then the static keys under its key)
///     LinkLayer              (framing and ARQ; datagrams)
///
/// When the sender has proved it knew the code (`senderProven`), its user pins the sender's key
/// and says so (`take(.pinned)`): only then does P4 go out. A failure is thrown and pins nothing.
/// A session made `busy` answers the sender with the one-byte `busy` and ends (`answered`).
public struct PairingReceiverSession {
    public enum Event: Equatable, Sendable {
        /// P2 sent: the sender holds its one guess at the code. Unless it pairs now, the code is
        /// used up (docs/protocol.md §9, "Rules").
        case codeTried
        /// P3 read: pin `sender`, then hand in `.pinned` (or `.notPinned`).
        case senderProven(PairingPeer)
        /// P4 sent: paired with `sender` (the connection ends once P4 is acknowledged).
        case paired(sender: PairingPeer)
        /// A one-byte answer went instead of P2: `busy`, or the refusal of a P1 it could not read.
        case answered(PairingError)
    }

    /// What the user says once told `senderProven`.
    public enum Input: Sendable, Equatable {
        case pinned
        /// The key could not be kept: no P4; the sender sees the pairing fail.
        case notPinned
    }

    typealias Stack = LayerStack<PairingResponderLayer, LinkLayer>

    private var stack: Stack
    private var events: [Event] = []
    private var lastStage: PairingResponderLayer.Stage?

    /// `identity` and `name` are ours; `code` the one shown to the user. `busy`: another pairing
    /// is open, and this sender is told so.
    public init(identity: Identity, name: String, code: PairingPasscode, busy: Bool = false, maxDatagramSize: Int,
                peerMaxDatagramSize: Int? = nil, now: Instant, configuration: SessionConfiguration = .init(),
                random: @escaping PairingRandomSource = Random.bytes) throws(SessionError) {
        var responder: PairingResponder?
        if !busy {
            do {
                responder = try PairingResponder(identity: identity, name: name, code: code, random: random)
            } catch {
                throw .pairing(error)
            }
        }
        let layer = PairingResponderLayer(responder: responder, now: now, handshakeTimeout: configuration.handshakeTimeout,
                                          answerTimeout: SessionConfiguration.pairingAnswerTimeout)
        // Frames count as progress at once: there are only four messages, none worth replaying.
        let link = LinkLayer(configuration: configuration, maxDatagramSize: maxDatagramSize, peerMaxDatagramSize: peerMaxDatagramSize,
                             fillsWindow: false, now: now)
        stack = layer.stacked(on: link)
    }

    private var stage: PairingResponderLayer.Stage? { stack.layer(PairingResponderLayer.self)?.stage }

    /// Events follow the layer's stages.
    private mutating func noteStage() {
        guard let stage, stage != lastStage else { return }
        lastStage = stage
        switch stage {
        case .awaitingPin(let peer): events.append(.senderProven(peer))
        case .paired(let peer): events.append(.paired(sender: peer))
        case .answered(let why): events.append(.answered(why))
        case .awaitingMessage3: events.append(.codeTried)
        case .awaitingMessage1: break
        }
    }
}

extension PairingReceiverSession: DatagramEndpoint {
    public typealias Failure = SessionError

    public mutating func nextDatagram(now: Instant) throws(SessionError) -> [UInt8]? { try stack.nextDown(now: now) }

    public mutating func receive(datagram: [UInt8], now: Instant) throws(SessionError) {
        defer { noteStage() }
        try stack.receive(datagram, now: now)
    }

    public mutating func handleTimers(now: Instant) throws(SessionError) { try stack.handleTimers(now: now) }
    public var nextDeadline: Instant? { stack.nextDeadline }

    public var status: ConnectionStatus {
        switch stage {
        case .paired?, .answered?: stack.layer(LinkLayer.self)?.link.isIdle ?? true ? .settled : .complete
        default: .running
        }
    }

    public mutating func takeEvents() -> [Event] {
        noteStage()
        defer { events.removeAll() }
        return events
    }

    public mutating func linkResized(maxDatagramSize: Int, peerMaxDatagramSize: Int) {
        stack.handle(.datagramSizeChanged(own: maxDatagramSize, peer: peerMaxDatagramSize))
    }

    public mutating func take(_ input: Input, now: Instant) throws(SessionError) {
        defer { noteStage() }
        switch input {
        case .pinned:
            try stack.withLayer(PairingResponderLayer.self) { layer throws(SessionError) in try layer.pinned() }
            try? stack.passDown(now: now)
        case .notPinned:
            throw .pairing(.notPinned)
        }
    }
}

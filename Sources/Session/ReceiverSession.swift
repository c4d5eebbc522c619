import Framing
import Handshake
import Keys
import Pipeline
import Sodium
import Transfer

/// The receiving endpoint: every layer composed, sans-IO, serving one connection at a time.
///
/// It lives as long as the receiver runs: the trust store, the handshake replay guard and partial
/// transfers (for resume) carry over from one connection to the next.
public struct ReceiverSession {
    public enum Event: Equatable, Sendable {
        /// A trusted sender completed the handshake.
        case authenticated(sender: String, fingerprint: String)
        /// A connection was refused during the handshake (for the local log; the peer learns nothing).
        case refused(SessionError.RefusalReason)
        case transfer(TransferReceiver.Event)
    }

    private enum State {
        case idle
        case awaitingHello(NoiseIKResponder, deadline: Instant)
        case established(SecureTransferCodec)
        /// We sent the refusal; the link closes once it is delivered (or soon after).
        case refusing(SessionError.RefusalReason, deadline: Instant)
    }

    private let identity: Identity
    private let trust: TrustStore
    private let configuration: SessionConfiguration
    private var transfer: TransferReceiver
    private var replayGuard = HandshakeReplayGuard()
    private var link: ReliableLink?
    /// When the peer was last heard from on the current link.
    private var lastHeard = Instant.zero
    /// The wall clock (nanoseconds since the Unix epoch) when the current connection was accepted,
    /// and the monotonic instant that goes with it: message 1's timestamp is checked against them.
    private var acceptedAt = (wallClock: UInt64(0), now: Instant.zero)
    private var state = State.idle
    private var events: [Event] = []

    public init(identity: Identity, trust: TrustStore, store: any FileStore,
                configuration: SessionConfiguration = .init(), maxFileSize: UInt64 = 1 << 40) {
        self.identity = identity
        self.trust = trust
        self.configuration = configuration
        self.transfer = TransferReceiver(store: store, makeHasher: { FileHasher() }, maxFileSize: maxFileSize)
    }

    public mutating func takeEvents() -> [Event] {
        events += transfer.takeEvents().map(Event.transfer)
        defer { events.removeAll() }
        return events
    }

    public var isConnected: Bool { link != nil }
    /// The sender of the current connection has said goodbye (its files are settled).
    public var senderSaidGoodbye: Bool { transfer.sessionEnded }
    public var linkStatistics: LinkStatistics? { link?.statistics }
    /// Bytes from the peer the current link holds (see `ReliableLink.bufferedInboundBytes`).
    public var linkBufferedInboundBytes: Int? { link?.bufferedInboundBytes }
    public var partialTransfers: Int { transfer.partialCount }

    /// Whether the current connection is finished (goodbye exchanged and delivered, or a refusal
    /// sent): the driver should disconnect.
    public var connectionComplete: Bool {
        guard let link else { return false }
        switch state {
        case .established: return transfer.sessionEnded && link.isIdle
        case .refusing: return link.isIdle
        case .idle, .awaitingHello: return false
        }
    }

    /// A sender connected. `wallClock` is nanoseconds since the Unix epoch, now (message 1's
    /// timestamp may be at most `maxTimestampAhead` past it); `ephemeral` is for tests only.
    public mutating func accept(maxDatagramSize: Int, peerMaxDatagramSize: Int? = nil, now: Instant, wallClock: UInt64,
                                 ephemeral: SecureBytes? = nil) throws(SessionError) {
        do {
            let responder = try NoiseIKResponder(localStatic: identity.secretKey, prologue: blesendPrologue, ephemeral: ephemeral)
            state = .awaitingHello(responder, deadline: now.advanced(by: configuration.handshakeTimeout))
        } catch {
            throw .handshake(error)
        }
        var link = ReliableLink(configuration: configuration.link, maxDatagramSize: maxDatagramSize)
        link.peerMaxDatagramSize = peerMaxDatagramSize
        // Until the peer has authenticated, nothing longer than a handshake message is accepted,
        // and only a handshake's worth of frames is buffered.
        link.maxIncomingMessageLength = maxHandshakeMessageLength
        link.receiveWindow = handshakeReceiveWindow
        self.link = link
        lastHeard = now
        acceptedAt = (wallClock, now)
    }

    /// The connection ended (for whatever reason). Partial files wait for the sender to resume.
    public mutating func linkLost(now: Instant) {
        link = nil
        state = .idle
        transfer.connectionLost(now: now)
        transfer.expirePartials(now: now)
    }

    /// Shutting down: partial files are removed.
    public mutating func shutdown() {
        link = nil
        state = .idle
        transfer.discardAll()
    }

    public mutating func setMaxDatagramSize(_ size: Int, peer: Int? = nil) {
        link?.maxDatagramSize = size
        link?.peerMaxDatagramSize = peer
    }

    public mutating func receive(datagram: [UInt8], now: Instant) throws(SessionError) {
        // Move the link out (not copy) so its buffers stay uniquely referenced: no copy-on-write per datagram.
        guard var link = self.link.take() else { return }
        lastHeard = now
        do {
            try link.receive(datagram: datagram, now: now)
        } catch {
            self.link = link
            throw SessionError(error)
        }
        var failure: SessionError?
        while failure == nil, let message = link.nextMessage() {
            do {
                try handle(message: message, link: &link, now: now)
            } catch {
                failure = error
            }
        }
        self.link = link
        if let failure { throw failure }
    }

    public var nextDeadline: Instant? {
        guard let link else { return nil }
        var deadline = lastHeard.advanced(by: configuration.idleTimeout)
        if let linkDeadline = link.nextDeadline { deadline = min(deadline, linkDeadline) }
        switch state {
        case .awaitingHello(_, let handshakeDeadline), .refusing(_, let handshakeDeadline):
            return min(deadline, handshakeDeadline)
        default:
            return deadline
        }
    }

    public mutating func handleTimers(now: Instant) throws(SessionError) {
        switch state {
        case .awaitingHello(_, let deadline) where now >= deadline:
            throw .handshakeTimeout
        case .refusing(let reason, let deadline) where now >= deadline:
            throw .refusedSender(reason)
        default:
            break
        }
        if link != nil, now >= lastHeard.advanced(by: configuration.idleTimeout) { throw .linkLost }
        do {
            try link?.handleTimers(now: now)
        } catch {
            throw SessionError(error)
        }
    }

    public mutating func nextDatagram(now: Instant) -> [UInt8]? {
        link?.nextDatagram(now: now)
    }

    // MARK: - Steps

    private mutating func handle(message: [UInt8], link: inout ReliableLink, now: Instant) throws(SessionError) {
        switch state {
        case .idle, .refusing:
            return
        case .awaitingHello(var responder, _):
            let (reply, codec): ([UInt8], SecureTransferCodec)
            switch try hello(message, responder: &responder, now: now) {
            case .accepted(let message2, let established):
                (reply, codec) = (message2, established)
            case .refused(let reason):
                // One answer for every failure: the sender learns nothing about why.
                events.append(.refused(reason))
                do { try link.send(message: refusalMessage) } catch { throw SessionError(error) }
                state = .refusing(reason, deadline: now.advanced(by: refusalLinger))
                return
            }
            do { try link.send(message: reply) } catch { throw SessionError(error) }
            link.maxIncomingMessageLength = FrameLayout.maxMessageLength
            link.receiveWindow = configuration.link.window
            state = .established(codec)
        case .established(var codec):
            // Move the codec out (not copy) so its buffers stay uniquely referenced; put back on every path.
            state = .idle
            defer { state = .established(codec) }
            let replies: [TransferMessage]
            do throws(SessionError) {
                let incoming = try codec.open(message)
                do {
                    replies = try transfer.receive(incoming, now: now)
                } catch {
                    throw .transfer(error)
                }
            } catch {
                // A record that fails authentication, or an authenticated sender breaking the
                // transfer rules: the file in progress is not resumable, its partial goes now.
                transfer.abandonCurrent(because: Self.fileFailure(for: error))
                throw error
            }
            for reply in replies {
                let sealed = try codec.seal(reply)
                do { try link.send(message: sealed) } catch { throw SessionError(error) }
            }
        }
    }

    /// What the file in progress died of, when a connection ends on `error` after the handshake.
    static func fileFailure(for error: SessionError) -> FileFailure {
        switch error {
        case .transfer(let cause): .senderBrokeProtocol(cause)
        default: .tampered
        }
    }

    private enum Hello {
        /// Message 2 to send, and the record codec for the rest of the connection.
        case accepted([UInt8], SecureTransferCodec)
        case refused(SessionError.RefusalReason)
    }

    /// Checks handshake message 1; returns message 2 and the record codec, or why to refuse.
    private mutating func hello(_ message: [UInt8], responder: inout NoiseIKResponder, now: Instant)
        throws(SessionError) -> Hello {
        let remoteStatic: [UInt8], payload: [UInt8]
        do {
            (remoteStatic, payload) = try responder.readMessage1(message)
        } catch {
            return .refused(.malformedHandshake)
        }
        let fingerprint = PublicKey(bytes: remoteStatic)?.fingerprint ?? "?"
        guard let sender = trust.name(for: remoteStatic) else { return .refused(.unknownSender(fingerprint: fingerprint)) }
        var reader = ByteReader(payload)
        // Only a well-formed offer opens a connection; judged before the timestamp is remembered.
        guard let timestamp = try? reader.readUInt64(),
              let opening = try? TransferMessage(decoding: reader.readRest()), case .offer = opening else {
            return .refused(.badOpening(sender: sender))
        }
        let wallClock = acceptedAt.wallClock &+ UInt64(max(0, now.duration(since: acceptedAt.now).nanoseconds))
        switch replayGuard.judge(timestamp: timestamp, from: remoteStatic, wallClock: wallClock) {
        case .fresh: break
        case .replayed: return .refused(.replayedHandshake(sender: sender))
        case .ahead(let nanoseconds): return .refused(.clockAhead(sender: sender, seconds: nanoseconds / 1_000_000_000))
        }
        let reply: TransferMessage
        do {
            reply = try transfer.begin(sender: sender, senderKey: remoteStatic, opening: opening, now: now)
        } catch {
            return .refused(.badOpening(sender: sender))
        }
        do {
            let message2 = try responder.writeMessage2(payload: reply.encoded())
            let keys = try responder.split()
            let codec = makeSecureTransferCodec(send: keys.responderToInitiator, receive: keys.initiatorToResponder,
                                                rekeyAfter: configuration.rekeyAfterRecords)
            events.append(.authenticated(sender: sender, fingerprint: fingerprint))
            return .accepted(message2, codec)
        } catch {
            throw .handshake(error as? HandshakeError ?? .wrongState)
        }
    }
}

/// How long a receiver keeps a refused connection before closing it (time for the refusal to arrive).
let refusalLinger = Duration.seconds(2)

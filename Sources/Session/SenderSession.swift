import Framing
import Handshake
import Keys
import Pipeline
import Sodium
import Transfer

/// The sending endpoint: every layer of the stack composed, sans-IO.
///
/// Drive it with `connect` when a link comes up, `receive` for each datagram, `nextDatagram` to
/// get what to transmit, and `handleTimers` at `nextDeadline`. When a link drops, call
/// `linkLost` and then `connect` again on the next link: the transfer resumes where the receiver
/// says its data stopped, under a fresh handshake.
public struct SenderSession {
    public enum Event: Equatable, Sendable {
        /// The receiver proved it holds the pinned key; data flows from now on.
        case authenticated(fingerprint: String)
        case transfer(TransferSender.Event)
    }

    private enum State {
        case disconnected
        case awaitingResponse(NoiseIKInitiator, deadline: Instant)
        case established(SecureTransferCodec)
    }

    private let identity: Identity
    private let receiverKey: PublicKey
    private let configuration: SessionConfiguration
    private var transfer: TransferSender
    private var link: ReliableLink?
    /// When the peer was last heard from on the current link.
    private var lastHeard = Instant.zero
    private var state = State.disconnected
    private var events: [Event] = []

    public init(identity: Identity, receiverKey: PublicKey, files: [any FileSource],
                configuration: SessionConfiguration = .init(),
                makeTransferID: @escaping () -> TransferID = randomTransferID) {
        self.identity = identity
        self.receiverKey = receiverKey
        self.configuration = configuration
        self.transfer = TransferSender(files: files, makeHasher: { FileHasher() }, makeID: makeTransferID)
    }

    public var isFinished: Bool { transfer.isFinished }
    public var isConnected: Bool { link != nil }
    /// The handshake is complete on the current link: what is sent now is file data.
    public var isEstablished: Bool {
        if case .established = state { return true }
        return false
    }

    /// Nothing left to send or acknowledge on the current link.
    public var isLinkIdle: Bool { link?.isIdle ?? true }
    public var linkStatistics: LinkStatistics? { link?.statistics }
    /// The link's smoothed round-trip time and current retransmission timeout.
    public var linkTiming: (smoothedRTT: Duration?, rto: Duration)? { link.map { ($0.smoothedRoundTripTime, $0.retransmissionTimeout) } }

    public mutating func takeEvents() -> [Event] {
        events += transfer.takeEvents().map(Event.transfer)
        defer { events.removeAll() }
        return events
    }

    /// A new link is up: start the handshake. `wallClock` is nanoseconds since the Unix epoch
    /// (replay protection); `ephemeral` is for tests only.
    public mutating func connect(maxDatagramSize: Int, peerMaxDatagramSize: Int? = nil, now: Instant, wallClock: UInt64,
                                 ephemeral: SecureBytes? = nil) throws(SessionError) {
        var link = ReliableLink(configuration: configuration.link, maxDatagramSize: maxDatagramSize)
        link.peerMaxDatagramSize = peerMaxDatagramSize
        let opening = transfer.openingMessage()
        var payload: [UInt8] = []
        payload.appendBigEndian(wallClock)
        opening.encode(into: &payload)
        do {
            var initiator = try NoiseIKInitiator(localStatic: identity.secretKey, remoteStatic: receiverKey.bytes,
                                                 prologue: blesendPrologue, ephemeral: ephemeral)
            try link.send(message: try initiator.writeMessage1(payload: payload))
            // Until the receiver has authenticated, nothing longer than a handshake message is
            // accepted, and only a handshake's worth of frames is buffered.
            link.maxIncomingMessageLength = maxHandshakeMessageLength
            link.receiveWindow = handshakeReceiveWindow
            state = .awaitingResponse(initiator, deadline: now.advanced(by: configuration.handshakeTimeout))
        } catch let error as LinkError {
            throw SessionError(error)
        } catch {
            throw .handshake(error as? HandshakeError ?? .wrongState)
        }
        self.link = link
        lastHeard = now
    }

    /// The link went away. Transfer state is kept for the next `connect`.
    public mutating func linkLost() {
        link = nil
        state = .disconnected
        transfer.connectionLost()
    }

    /// The MTU changed (e.g. a socket was re-acquired).
    public mutating func setMaxDatagramSize(_ size: Int, peer: Int? = nil) {
        link?.maxDatagramSize = size
        link?.peerMaxDatagramSize = peer
    }

    public mutating func receive(datagram: [UInt8], now: Instant) throws(SessionError) {
        // Move the link out (not copy) so its buffers stay uniquely referenced: no copy-on-write per datagram.
        guard var link = self.link.take() else { return }
        lastHeard = now
        defer { self.link = link }
        do {
            try link.receive(datagram: datagram, now: now)
        } catch {
            throw SessionError(error)
        }
        while let message = link.nextMessage() {
            try handle(message: message, link: &link)
        }
    }

    public var nextDeadline: Instant? {
        guard let link else { return nil }
        var deadline = lastHeard.advanced(by: configuration.idleTimeout)
        if let linkDeadline = link.nextDeadline { deadline = min(deadline, linkDeadline) }
        if case .awaitingResponse(_, let handshakeDeadline) = state { deadline = min(deadline, handshakeDeadline) }
        return deadline
    }

    public mutating func handleTimers(now: Instant) throws(SessionError) {
        guard link != nil else { return }
        // No message 2 in time: whoever took message 1 is not answering (a silent impostor needs
        // no key to do this); the caller treats it like a refusal by that device.
        if case .awaitingResponse(_, let deadline) = state, now >= deadline { throw .handshakeTimeout }
        if now >= lastHeard.advanced(by: configuration.idleTimeout) { throw .linkLost }
        do {
            try link?.handleTimers(now: now)
        } catch {
            throw SessionError(error)
        }
    }

    /// The next datagram to transmit now, if any. Pulls file data into the link while the link
    /// has room (so memory stays bounded by the window, whatever the file size).
    public mutating func nextDatagram(now: Instant) throws(SessionError) -> [UInt8]? {
        // Move the link and the codec out (not copy) so their buffers stay uniquely referenced:
        // no copy-on-write of the link's frame rings per datagram, nor of the codec's buffers per record.
        guard var link = self.link.take() else { return nil }
        defer { self.link = link }
        if case .established(var codec) = state {
            state = .disconnected
            defer { state = .established(codec) }
            let fillTarget = configuration.link.window * link.maxDatagramSize
            while link.bufferedOutboundBytes < fillTarget, transfer.hasMessageReady {
                let message: TransferMessage?
                do {
                    message = try transfer.nextMessage()
                } catch {
                    throw .transfer(error)
                }
                guard let message else { break }
                let sealed = try codec.seal(message)
                do { try link.send(message: sealed) } catch { throw SessionError(error) }
            }
        }
        return link.nextDatagram(now: now)
    }

    private mutating func handle(message: [UInt8], link: inout ReliableLink) throws(SessionError) {
        switch state {
        case .disconnected:
            return
        case .awaitingResponse(var initiator, _):
            if message == refusalMessage { throw .refusedByPeer }
            let payload: [UInt8]
            let keys: HandshakeResult
            do {
                payload = try initiator.readMessage2(message)
                keys = try initiator.split()
            } catch {
                throw .peerNotAuthenticated
            }
            let codec = makeSecureTransferCodec(send: keys.initiatorToResponder, receive: keys.responderToInitiator,
                                                rekeyAfter: configuration.rekeyAfterRecords)
            link.maxIncomingMessageLength = FrameLayout.maxMessageLength
            link.receiveWindow = configuration.link.window
            events.append(.authenticated(fingerprint: receiverKey.fingerprint))
            let reply: TransferMessage
            do {
                reply = try TransferMessage(decoding: payload)
            } catch {
                // Message 2 authenticated: the pinned receiver itself sent this.
                throw .transfer(.malformedMessage(error))
            }
            do { try transfer.receive(reply) } catch { throw .transfer(error) }
            state = .established(codec)
        case .established(var codec):
            let incoming = try codec.open(message)
            state = .established(codec)
            do { try transfer.receive(incoming) } catch { throw .transfer(error) }
        }
    }
}

import Framing
import Handshake
import Pipeline

/// Framing and selective-repeat ARQ as a layer of the stack: datagrams below, whole messages
/// (handshake messages, sealed records) above. It also owns the connection's idle timeout,
/// because it is the layer that tells which datagrams moved the connection forward.
///
/// Signals it hears: `peerAuthenticated` (lift the handshake's limits), `peerProvedLive` (count
/// frames as progress from now), `approvalPending` (keep the connection up while a person
/// decides), `datagramSizeChanged`.
struct LinkLayer: Layer {
    typealias Lower = [UInt8]
    typealias Upper = [UInt8]
    typealias Failure = SessionError
    typealias Signal = StackSignal

    var link: ReliableLink
    /// Whether messages are taken from above only while less than one window of full frames
    /// waits to go out (the sender, so memory stays bounded whatever the file size), or always
    /// (the receiver's few, small answers).
    let fillsWindow: Bool
    /// How long the peer may make no progress before the connection counts as lost.
    let idleTimeout: Duration
    /// While a person decides about this connection (first contact): the end of that wait. The
    /// connection is not idle before it, plus `SessionConfiguration.approvalMargin`.
    private var approvalDeadline: Instant?
    /// When the peer last made progress (`ReliableLink.lastPeerProgress`), or the connection
    /// started. Not every datagram: one that fails framing, a duplicate, a frame outside the
    /// window or an ack of nothing new would otherwise keep a stalled or hostile peer's
    /// connection open forever with one datagram per `idleTimeout` (issue 20). Everything above
    /// the link arrives in frames that count, and a record that fails authentication ends the
    /// connection, so what keeps it open is what the peer gets through.
    private var lastProgress: Instant
    /// Whether new frames count as the peer's progress yet. The receiver's link waits for
    /// `peerProvedLive` (issue 31): a replayed message 1 of a trusted sender is answered, but its
    /// replayer can never send a record, and a fragment every 29 s must not keep its connection
    /// (and its slot) open.
    private var framesCount: Bool

    /// `framesCountBeforeLive`: whether frames count as progress before `peerProvedLive` (the
    /// sender's link: the receiver's acknowledgements are its progress).
    init(configuration: SessionConfiguration, maxDatagramSize: Int, peerMaxDatagramSize: Int?, fillsWindow: Bool,
         framesCountBeforeLive: Bool = true, now: Instant) {
        link = ReliableLink(configuration: configuration.link, maxDatagramSize: maxDatagramSize)
        link.peerMaxDatagramSize = peerMaxDatagramSize
        // Until the peer has authenticated, nothing longer than a handshake message is accepted,
        // and only a handshake's worth of frames is buffered (`peerAuthenticated` lifts this).
        link.maxIncomingMessageLength = maxHandshakeMessageLength
        link.receiveWindow = handshakeReceiveWindow
        self.fillsWindow = fillsWindow
        idleTimeout = configuration.idleTimeout
        lastProgress = now
        framesCount = framesCountBeforeLive
    }

    mutating func handle(_ signal: StackSignal) {
        switch signal {
        case .peerAuthenticated:
            // The handshake completed: the limits of an authenticated peer apply from now on.
            link.maxIncomingMessageLength = FrameLayout.maxMessageLength
            link.receiveWindow = link.configuration.window
        case .peerProvedLive(let at):
            framesCount = true
            if at > lastProgress { lastProgress = at }
        case .approvalPending(let until):
            approvalDeadline = until
        case .datagramSizeChanged(let own, let peer):
            link.maxDatagramSize = own
            link.peerMaxDatagramSize = peer
        case .abandonFile:
            break
        }
    }

    /// When the connection counts as lost if the peer makes no progress until then.
    private var silenceDeadline: Instant {
        let idle = lastProgress.advanced(by: idleTimeout)
        guard let approvalDeadline else { return idle }
        return max(idle, approvalDeadline.advanced(by: SessionConfiguration.approvalMargin))
    }

    mutating func receive(_ datagram: [UInt8], now: Instant) throws(SessionError) {
        defer {
            if framesCount, let progress = link.lastPeerProgress, progress > lastProgress { lastProgress = progress }
        }
        do { try link.receive(datagram: datagram, now: now) } catch { throw SessionError(error) }
    }

    mutating func send(_ message: [UInt8], now: Instant) throws(SessionError) {
        do { try link.send(message: message) } catch { throw SessionError(error) }
    }

    mutating func nextUp() -> [UInt8]? { link.nextMessage() }

    mutating func nextDown(now: Instant) -> [UInt8]? { link.nextDatagram(now: now) }

    mutating func handleTimers(now: Instant) throws(SessionError) {
        if now >= silenceDeadline { throw .linkLost }
        do { try link.handleTimers(now: now) } catch { throw SessionError(error) }
    }

    var nextDeadline: Instant? {
        let silence = silenceDeadline
        return link.nextDeadline.map { min($0, silence) } ?? silence
    }

    var canSend: Bool { !fillsWindow || link.bufferedOutboundBytes < link.configuration.window * link.maxDatagramSize }
}

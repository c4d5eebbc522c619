import Pipeline
import Session

/// Pairing (`blesend pair`, `blerecv pair`): one connection each, driven like a transfer's.
extension EndpointRunner {
    /// The pairing sender's connection; `make` builds the session for the transport's datagram
    /// sizes at the clock's `now`. Returns the session (paired, or not when the link ended first).
    public static func runPairingSender(
        over transport: any DatagramTransport, clock: some EndpointClock = MonotonicClock(),
        make: (_ maxDatagramSize: Int, _ peerMaxDatagramSize: Int?, _ now: Instant) throws(SessionError) -> PairingSenderSession,
        onEvent: (PairingSenderSession.Event) -> Void
    ) async throws(SessionError) -> PairingSenderSession {
        var session = try make(transport.maxDatagramSize, transport.peerMaxDatagramSize, clock.now)
        _ = try await drive(&session, over: transport, clock: clock, inputs: NoInputs()) { $0.forEach(onEvent) }
        return session
    }

    /// The pairing receiver's connection. `onEvent` hears `senderProven` on the driver's thread;
    /// the user pins the key and posts `.pinned` (or `.notPinned`) to `inputs`, which wakes the
    /// driver.
    public static func runPairingReceiver(
        over transport: any DatagramTransport, clock: some EndpointClock = MonotonicClock(),
        inputs: InputMailbox<PairingReceiverSession.Input>,
        make: (_ maxDatagramSize: Int, _ peerMaxDatagramSize: Int?, _ now: Instant) throws(SessionError) -> PairingReceiverSession,
        onEvent: (PairingReceiverSession.Event) -> Void
    ) async throws(SessionError) -> Ending {
        var session = try make(transport.maxDatagramSize, transport.peerMaxDatagramSize, clock.now)
        return try await drive(&session, over: transport, clock: clock, inputs: inputs) { $0.forEach(onEvent) }
    }
}

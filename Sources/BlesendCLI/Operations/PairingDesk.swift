import Pairing
import Pipeline

/// The receiver's side of `blerecv pair`, sans-IO: which code is on show, who may try it, and
/// the pauses after failures (docs/protocol.md §9, "Rules").
///
/// - One attempt at a time: a sender that connects while another pairs is told `busy`.
/// - A code serves one attempt. An attempt is a connection that got P2 (whoever sent P1 then
///   holds one guess at the code): whether it then fails or breaks off, that code is burnt.
/// - After a failed attempt the next code is shown only after a pause: 5 s, doubling with each
///   failure, at most 5 minutes; meanwhile every sender is told `busy`.
/// - The whole run ends at `deadline` (the code's lifetime, `--timeout`) unless paired first.
struct PairingDesk {
    enum Decision: Equatable {
        /// Run the pairing with this code.
        case pair(PairingPasscode)
        /// Answer `busy`: another attempt is open, or the desk pauses after a failure.
        case busy
    }

    private let makeCode: @Sendable () -> PairingPasscode
    /// The code on show; nil while an attempt runs or during a pause.
    private(set) var code: PairingPasscode?
    private(set) var attemptOpen = false
    private(set) var failures = 0
    /// During a pause: when the next code is shown.
    private(set) var pausedUntil: Instant?
    let deadline: Instant

    init(now: Instant, lifetime: Duration, makeCode: @escaping @Sendable () -> PairingPasscode = { PairingPasscode.random() }) {
        self.makeCode = makeCode
        deadline = now.advanced(by: lifetime)
        code = makeCode()
    }

    /// A sender connected.
    mutating func linkArrived(now: Instant) -> Decision {
        _ = resumeIfDue(now: now)
        guard !attemptOpen, let code, now < deadline else { return .busy }
        attemptOpen = true
        return .pair(code)
    }

    /// The open attempt's connection ended before the sender guessed (no P2 went out: it sent
    /// something that is not P1, or left): the code stays good.
    mutating func attemptUnused() {
        attemptOpen = false
    }

    /// The open attempt used its guess and did not pair: the code is burnt, and the next is shown
    /// after a pause. Returns when.
    @discardableResult
    mutating func attemptFailed(now: Instant) -> Instant {
        attemptOpen = false
        failures += 1
        code = nil
        let until = now.advanced(by: PairingPause.after(failures: failures))
        pausedUntil = until
        return until
    }

    /// After a pause: a new code, once `now` reaches its end (nil if none is due).
    @discardableResult
    mutating func resumeIfDue(now: Instant) -> PairingPasscode? {
        guard let until = pausedUntil, now >= until, !attemptOpen else { return nil }
        pausedUntil = nil
        code = makeCode()
        return code
    }
}

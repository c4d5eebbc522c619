import Pipeline
import Transfer

/// The sender's transfer layer at the top of its stack: offers, data within the transfer window,
/// `done`, `bye` down; `accept`, `ack`, `confirm`, `reject`, `bye` up. Nothing comes from above:
/// it reads its files through their `FileSource`s.
struct SendingTransferLayer: Layer {
    typealias Lower = TransferMessage
    typealias Upper = Never
    typealias Failure = SessionError

    var transfer: TransferSender

    mutating func receive(_ message: TransferMessage, now: Instant) throws(SessionError) {
        do { try transfer.receive(message) } catch { throw .transfer(error) }
    }

    mutating func send(_ unit: Never, now: Instant) {}

    mutating func nextUp() -> Never? { nil }

    mutating func nextDown(now: Instant) throws(SessionError) -> TransferMessage? {
        guard transfer.hasMessageReady else { return nil }
        do { return try transfer.nextMessage() } catch { throw .transfer(error) }
    }

    mutating func handleTimers(now: Instant) {}

    var nextDeadline: Instant? { nil }

    var canSend: Bool { false }
}

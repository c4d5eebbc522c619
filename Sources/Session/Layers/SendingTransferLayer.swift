import Pipeline
import Transfer

/// The sender's transfer layer at the top of its stack: offers, data within the transfer window,
/// `done`, `bye` down; `accept`, `ack`, `confirm`, `reject`, `bye` up. Nothing comes from above:
/// it reads its files through their `FileSource`s.
///
/// Signals: it raises `approvalPending` while the receiver's user decides about us (first
/// contact), and hears `datagramSizeChanged` (records sized to the link).
struct SendingTransferLayer: Layer {
    typealias Lower = TransferMessage
    typealias Upper = Never
    typealias Failure = SessionError
    typealias Signal = StackSignal

    var transfer: TransferSender
    /// A message that did not fit the last batch: it goes next.
    private var held: TransferMessage?
    /// How long the receiver's user may take at first contact, plus the answer's trip.
    private let approvalLimit: Duration
    /// While the receiver's user decides about us (`pending`): when we stop waiting.
    private var approvalDeadline: Instant?
    private var signals: [StackSignal] = []

    init(transfer: TransferSender, approvalLimit: Duration) {
        self.transfer = transfer
        self.approvalLimit = approvalLimit
    }

    mutating func receive(_ message: TransferMessage, now: Instant) throws(SessionError) {
        do {
            try transfer.receive(message)
        } catch {
            switch error {
            case .notApproved: throw .notApprovedByPeer
            case .notTrusted: throw .notTrustedByPeer
            case .receiverBusy(let seconds, let ahead): throw .receiverBusy(retryAfter: .seconds(Int64(seconds)), ahead: Int(ahead))
            default: throw .transfer(error)
            }
        }
        if !transfer.isAwaitingApproval, approvalDeadline != nil {
            approvalDeadline = nil
            signals.append(.approvalPending(until: nil))
        } else if transfer.isAwaitingApproval, approvalDeadline == nil {
            let deadline = now.advanced(by: approvalLimit)
            approvalDeadline = deadline
            signals.append(.approvalPending(until: deadline))
        }
    }

    mutating func nextSignal() -> StackSignal? { signals.isEmpty ? nil : signals.removeFirst() }

    mutating func handle(_ signal: StackSignal) {
        if case .datagramSizeChanged(let own, _) = signal { transfer.dataPerRecord = RecordSizing.dataPerRecord(datagramSize: own) }
    }

    mutating func nextDown(now: Instant) throws(SessionError) -> TransferMessage? {
        if let held = held.take() { return held }
        guard let first = try next() else { return nil }
        // With pipelining, small messages ready now share a record (a `batch`), up to the size of
        // a full data record: a small file's offer, data and done cost one record, not three.
        let limit = min(transfer.dataPerRecord + 1, TransferConstants.maxBatchLength)
        guard transfer.extensions.contains(.pipelining), first.batchable, 3 + first.wireLength < limit else { return first }
        var batch = [first]
        var size = 3 + first.wireLength
        while let message = try next() {
            guard message.batchable, size + 2 + message.wireLength <= limit else {
                held = message
                break
            }
            batch.append(message)
            size += 2 + message.wireLength
        }
        return batch.count == 1 ? first : .batch(batch)
    }

    /// The transfer's next message, if it has one ready.
    private mutating func next() throws(SessionError) -> TransferMessage? {
        guard transfer.hasMessageReady else { return nil }
        do { return try transfer.nextMessage() } catch { throw .transfer(error) }
    }

    mutating func handleTimers(now: Instant) throws(SessionError) {
        if let deadline = approvalDeadline, now >= deadline { throw .approvalTimeout }
    }

    var nextDeadline: Instant? { approvalDeadline }
}

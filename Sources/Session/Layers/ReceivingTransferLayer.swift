import DequeModule
import Pipeline
import Transfer

/// The receiver's transfer layer at the top of its stack: it serves the opening offer (whose
/// answer rides in message 2), then every message of the connection, writing files through
/// `TransferReceiver`. Nothing comes from above. Signals: it hears `abandonFile`.
struct ReceivingTransferLayer: Layer {
    typealias Lower = ReceiverUnit
    typealias Upper = Never
    typealias Failure = SessionError
    typealias Signal = StackSignal

    var transfer: TransferReceiver
    /// Set on a connection served only to say that every slot is taken: its opening is never served.
    private let busy: BusyAnswer?
    private var down: Deque<ReceiverUnit> = []
    /// The opening's answer so far (the extensions granted), while its item waits for storage
    /// work out on another connection (`TransferReceiver.openingWaits`).
    private var waitingAnswer: [TransferMessage]?

    init(transfer: TransferReceiver, busy: BusyAnswer? = nil) {
        self.transfer = transfer
        self.busy = busy
    }

    mutating func receive(_ unit: ReceiverUnit, now: Instant) throws(SessionError) {
        switch unit {
        case .opened(_, _, let opening) where busy != nil, .stranger(let opening) where busy != nil:
            // At the cap: a sender that asks for `busy` is told when to come back (§8.6). One
            // that does not (an older sender) gets no answer: its handshake times out, and it
            // tries again after a pause, as it did with a receiver that served one at a time.
            guard let busy, case .hello(let asked) = opening.first, asked.contains(.busy) else { return }
            down.append(.answer([.hello(transfer.granting(asked)), .busy(retryAfterSeconds: busy.retryAfterSeconds, ahead: busy.ahead)]))
        case .opened(let sender, let senderKey, let opening):
            do {
                let answer = try transfer.begin(sender: sender, senderKey: senderKey, opening: opening, now: now)
                if transfer.openingWaits { waitingAnswer = answer } else { down.append(.answer(answer)) }
            } catch {
                down.append(.refuse)
            }
        case .stranger(let opening):
            // First contact: message 2 grants the extensions and says `pending`; the opening is
            // answered once the receiver's user has decided (`.opened` then).
            guard case .hello(let asked) = opening.first, transfer.opens(opening) else {
                down.append(.refuse)
                return
            }
            down.append(.answer([.hello(transfer.granting(asked)), .pending]))
        case .message(let message):
            do {
                down += try transfer.receive(message, now: now).map(ReceiverUnit.message)
            } catch {
                throw .transfer(error)
            }
        case .answer, .refuse:
            break
        }
    }

    /// A storage work's outcome (`TransferReceiver.storageDone`): its answer and what waited for
    /// it go down.
    mutating func storageDone(_ outcome: StorageOutcome, now: Instant) throws(SessionError) {
        do {
            down += try transfer.storageDone(outcome, now: now).map(ReceiverUnit.message)
        } catch {
            throw .transfer(error)
        }
    }

    mutating func handle(_ signal: StackSignal) {
        if case .abandonFile(let failure) = signal { transfer.abandonCurrent(because: failure) }
    }

    mutating func nextDown(now: Instant) -> ReceiverUnit? { down.popFirst() }

    mutating func handleTimers(now: Instant) throws(SessionError) {
        var replies: [TransferMessage]
        do {
            replies = try transfer.handleTimers(now: now)
        } catch {
            throw .transfer(error)
        }
        // The first reply answers a waiting opening: message 2 goes with it.
        if let answer = waitingAnswer, !replies.isEmpty {
            waitingAnswer = nil
            down.append(.answer(answer + [replies.removeFirst()]))
        }
        down += replies.map(ReceiverUnit.message)
    }

    var nextDeadline: Instant? { transfer.nextDeadline }
}

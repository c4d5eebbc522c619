import Session
import Synchronization

/// First contact (`blerecv --ask`): where the driver's prompt leaves the user's answer about an
/// unknown sender for the receiver's loop, which runs on another task or thread. The loop takes
/// it at its next turn (it looks every `FirstContactAnswers.pollInterval` while the user decides)
/// and applies it only to the request it answers: the same sender key *and* the same code. An
/// answer that comes after its connection ended is dropped, never given to the next stranger, and
/// an answer about one key never approves another that happens to show the same code.
public final class FirstContactAnswers: Sendable {
    public enum Answer: Equatable, Sendable {
        /// Trust the sender under `name` (its key is already in the trust directory).
        case approve(name: String)
        case decline
    }

    /// How often the receiver's loop looks for an answer while the user decides.
    public static let pollInterval = Duration.milliseconds(200)

    /// The request answered (its key, code and offer) and the answer.
    private let answer = Mutex<(request: ApprovalRequest, answer: Answer)?>(nil)

    public init() {}

    /// The user's `answer` to `request`.
    public func post(_ answer: Answer, to request: ApprovalRequest) {
        self.answer.withLock { $0 = (request, answer) }
    }

    /// The answer to `request`, once (nil if none yet). An answer posted for another request (another
    /// key, another code, or both) is dropped.
    func take(for request: ApprovalRequest) -> Answer? {
        answer.withLock { posted in
            defer { posted = nil }
            guard let posted, posted.request == request else { return nil }
            return posted.answer
        }
    }
}

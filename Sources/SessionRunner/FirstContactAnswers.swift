import Synchronization

/// First contact (`blerecv --ask`): where the driver's prompt leaves the user's answer about an
/// unknown sender for the receiver's loop, which runs on another task or thread. The loop takes
/// it at its next turn (it looks every `FirstContactAnswers.pollInterval` while the user decides)
/// and applies it only to the request it answers (same code): an answer that comes after its
/// connection ended is dropped, never given to the next stranger.
public final class FirstContactAnswers: Sendable {
    public enum Answer: Equatable, Sendable {
        /// Trust the sender under `name` (its key is already in the trust directory).
        case approve(name: String)
        case decline
    }

    /// How often the receiver's loop looks for an answer while the user decides.
    public static let pollInterval = Duration.milliseconds(200)

    private let answer = Mutex<(code: String, Answer)?>(nil)

    public init() {}

    /// The user's `answer` to the request that showed `code`.
    public func post(_ answer: Answer, code: String) {
        self.answer.withLock { $0 = (code, answer) }
    }

    /// The answer to the request that showed `code`, once (nil if none yet); an answer to any
    /// other request is dropped.
    func take(code: String) -> Answer? {
        answer.withLock { posted in
            defer { posted = nil }
            return posted?.code == code ? posted?.1 : nil
        }
    }
}

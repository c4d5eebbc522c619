import Session
import Synchronization

/// First contact (`blerecv --ask`): where the driver's prompt leaves the user's answer about an
/// unknown sender for the receiver's driver, which runs on another task or thread. Posting an
/// answer wakes the driver (the doorbell it installs for the connection), which hands the answer
/// to the endpoint at once as an input (`ReceiverEndpoint.take`); nothing polls. The endpoint
/// applies it only to the request it answers: the same sender key *and* the same code. An answer
/// that comes after its connection ended is dropped, never given to the next stranger, and an
/// answer about one key never approves another that happens to show the same code.
public final class FirstContactAnswers: Sendable {
    public typealias Answer = FirstContactAnswer

    /// An answer and the request it answers (its key, code and offer).
    public struct Posted: Sendable, Equatable {
        public var request: ApprovalRequest
        public var answer: Answer
    }

    /// How long before the session's own limit a prompt gives up, so that a yes typed at the last
    /// moment still reaches its connection.
    public static let answerMargin = Duration.seconds(2)

    private struct State {
        var posted: Posted?
        /// Wakes the driver of the current connection, if one runs.
        var doorbell: (@Sendable () -> Void)?
    }

    private let state = Mutex(State())

    public init() {}

    /// The user's `answer` to `request`; wakes the driver.
    public func post(_ answer: Answer, to request: ApprovalRequest) {
        let doorbell = state.withLock { state in
            state.posted = Posted(request: request, answer: answer)
            return state.doorbell
        }
        doorbell?()
    }

    /// The answer posted, once (nil if none).
    func take() -> Posted? {
        state.withLock { $0.posted.take() }
    }

    /// The answer to `request`, once (nil if none yet). An answer posted for another request (another
    /// key, another code, or both) is dropped.
    func take(for request: ApprovalRequest) -> Answer? {
        guard let posted = take(), posted.request == request else { return nil }
        return posted.answer
    }

    /// While a connection runs: what wakes its driver when an answer is posted (nil: none).
    func ring(_ doorbell: (@Sendable () -> Void)?) {
        state.withLock { $0.doorbell = doorbell }
    }
}

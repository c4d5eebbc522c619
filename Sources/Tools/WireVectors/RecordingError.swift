import Pipeline

/// Why a scenario could not be recorded as meant.
public enum RecordingError: Error, Equatable, Sendable {
    case setup(String)
    /// Neither side has a deadline while the session is not over.
    case stuck(at: Instant)
    /// A side's deadline lies before the current time although a round found nothing to do.
    case deadlineInThePast(at: Instant)
    case timeLimit
    /// The last connection was cut before the session ended.
    case ranOutOfConnections
    case ranOutOfTransferIDs
    /// The session ended otherwise than the scenario says (a changed protocol, or a wrong scenario).
    case unintendedOutcome(expected: WireVector.Expectation, got: WireVector.Expectation, stored: [Bool])
}

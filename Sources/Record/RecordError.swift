/// Why a record could not be sealed or opened. Vague on purpose where it matters: any tampering,
/// replay, reordering or loss shows up as `.authenticationFailed`. Errors while opening are
/// sticky: the opener refuses everything afterwards (the session is over).
public enum RecordError: Error, Equatable, Sendable {
    /// The record did not authenticate (tampered, replayed, reordered, dropped, or wrong key).
    case authenticationFailed
    /// Fewer bytes than a header and a tag.
    case truncated
    /// Header bits 1...7 were not zero.
    case reservedBitsSet
    /// A record after the `final` one (received, or asked to be sealed).
    case recordAfterFinal
    /// The record counter reached its last value; the session must end (it never wraps).
    case counterExhausted
    /// The plaintext exceeds the limit.
    case tooLarge
}

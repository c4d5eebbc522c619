/// A catalogue session that could not be recorded, printed or replayed as meant.
public struct GenerationError: Error, Equatable, Sendable, CustomStringConvertible {
    public let scenario: String
    public let detail: String

    public var description: String { "\(scenario): \(detail)" }
}

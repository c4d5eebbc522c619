/// A vector whose header cannot be turned into endpoints.
public struct SetupError: Error, Equatable, Sendable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// A session to record: the vector's header (with the outcome and stored files it is meant to
/// have), plus what happens on the link.
public struct Scenario: Sendable {
    /// The file name, without the extension.
    public var name: String
    /// Header of the vector to produce; its `events` are ignored, its `expect` and the files'
    /// `stored` flags are what the recording must end with.
    public var vector: WireVector
    public var attack: Attack
    /// Per connection: the link drops right after the sender has sent this many datagrams on it
    /// (`nil`: it is not cut). The rest of that batch is lost, and so is what the receiver answers.
    public var cuts: [Int?]
    /// Virtual time between a cut and the next connection.
    public var reconnectDelay: Duration

    public init(name: String, vector: WireVector, attack: Attack = .none, cuts: [Int?] = [],
                reconnectDelay: Duration = .seconds(1)) {
        self.name = name
        self.vector = vector
        self.attack = attack
        self.cuts = cuts
        self.reconnectDelay = reconnectDelay
    }
}

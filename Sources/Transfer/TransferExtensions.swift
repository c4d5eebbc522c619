/// Optional parts of the transfer protocol that two peers agree on per connection
/// (docs/protocol.md §8): the receiver lists what it takes (its extensions characteristic), the
/// sender asks for some of them in handshake message 1 (`hello`), and the receiver's `hello` in
/// message 2 says which it grants. Neither side uses an extension the other has not agreed to, so
/// a peer that knows none of them (a version 1 peer) still works: nothing is asked or granted.
public struct TransferExtensions: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// File data may travel zstd-compressed (`zdata`).
    public static let compression = TransferExtensions(rawValue: 1 << 0)

    /// The next offer may follow a file's `done`, and a new file's data its offer, without waiting
    /// for the receiver's answers.
    public static let pipelining = TransferExtensions(rawValue: 1 << 1)

    /// Whole folders: `folder`, `entry` and `commit` messages.
    public static let folders = TransferExtensions(rawValue: 1 << 2)

    /// A sender the receiver does not know yet may be accepted by the receiver's user, after both
    /// compare a code from the handshake (`pending`, §8.5). Listed only by a receiver run with `--ask`.
    public static let firstContact = TransferExtensions(rawValue: 1 << 3)

    /// A receiver that serves as many senders as it takes may answer a trusted sender's opening
    /// with `busy` and when to come back, instead of closing its channel unanswered (§8.6).
    public static let busy = TransferExtensions(rawValue: 1 << 4)

    /// A receiver that does not trust the sender says so in message 2 (`notTrusted`), which only
    /// the holder of its key can write, instead of the one-byte refusal: the sender knows at once
    /// that the receiver it pinned refused it, and stops looking for another (§8.7).
    public static let notTrusted = TransferExtensions(rawValue: 1 << 5)

    /// Listed, never asked for in a `hello`: the receiver runs `blerecv pair` and takes only
    /// pairing connections (§9), whose first message is P1, not Noise's message 1. A sender that
    /// wants to pair connects only to a receiver that lists it.
    public static let pairing = TransferExtensions(rawValue: 1 << 6)

    /// Every extension this implementation asks for and grants in a `hello` (not `pairing`).
    public static let known: TransferExtensions = [.compression, .pipelining, .folders, .firstContact, .busy, .notTrusted]

    public var description: String {
        var names: [String] = []
        if contains(.compression) { names.append("compression") }
        if contains(.pipelining) { names.append("pipelining") }
        if contains(.folders) { names.append("folders") }
        if contains(.firstContact) { names.append("first contact") }
        if contains(.busy) { names.append("busy") }
        if contains(.notTrusted) { names.append("not trusted") }
        if contains(.pairing) { names.append("pairing") }
        let unknown = rawValue & ~Self.known.rawValue & ~Self.pairing.rawValue
        if unknown != 0 { names.append("0x" + String(unknown, radix: 16)) }
        return names.isEmpty ? "none" : names.joined(separator: ", ")
    }
}

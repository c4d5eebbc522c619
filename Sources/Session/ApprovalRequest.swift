import Keys
import Transfer

/// First contact (`blerecv --ask`, docs/protocol.md §8.5): what the receiver's user is asked
/// about an unknown sender that completed the handshake.
public struct ApprovalRequest: Equatable, Sendable {
    /// The sender's static key (what goes into the trust directory if the user says yes).
    public let key: PublicKey
    /// The sender's key, as `PublicKey.fingerprint` shows it.
    public var fingerprint: String { key.fingerprint }
    /// The first contact code (`PairingCode`, "ddd ddd"): the sender shows the same one exactly
    /// when both took part in the same handshake.
    public let code: String
    /// What the sender's message 1 offers.
    public let offered: OfferedItem

    public init(key: PublicKey, code: String, offered: OfferedItem) {
        self.key = key
        self.code = code
        self.offered = offered
    }
}

/// What an opening message offers, for a person to read: a file's name or a folder item's path
/// (as sent, not yet judged: bytes that are not UTF-8 are shown replaced), and its size.
public struct OfferedItem: Equatable, Sendable {
    public enum Kind: Equatable, Sendable { case file, folder, folderEnd }

    public let kind: Kind
    public let name: String
    /// `nil` for a stream, a folder or a folder's end.
    public let size: UInt64?

    public init(kind: Kind, name: String, size: UInt64?) {
        self.kind = kind
        self.name = name
        self.size = size
    }

    /// The item `message` offers; nil for a message that offers nothing.
    init?(_ message: TransferMessage) {
        switch message {
        case .offer(let offer): self.init(kind: .file, name: String(decoding: offer.nameBytes, as: UTF8.self), size: offer.size)
        case .entry(let entry): self.init(kind: .file, name: String(decoding: entry.path, as: UTF8.self), size: entry.size)
        case .folder(_, _, let path): self.init(kind: .folder, name: String(decoding: path, as: UTF8.self), size: nil)
        case .commit: self.init(kind: .folderEnd, name: "", size: nil)
        default: return nil
        }
    }
}

/// One transfer-layer message: the plaintext of one record (docs/protocol.md §5).
public enum TransferMessage: Equatable, Sendable {
    case offer(Offer)
    case accept(id: TransferID, offset: UInt64)
    case data([UInt8])
    case ack(id: TransferID, received: UInt64)
    case done(id: TransferID, hash: [UInt8])
    case confirm(id: TransferID, status: ConfirmStatus, storedName: String)
    case reject(id: TransferID, reason: RejectReason)
    case bye
    /// The extensions a side asks for (sender, in message 1) or grants (receiver, in message 2).
    case hello(TransferExtensions)
    /// `originalSize` file bytes as one zstd frame (extension `compression`, docs/protocol.md §8).
    case zdata(originalSize: Int, frame: [UInt8])
    /// A folder of a sent tree (extension `folders`, §8.4); one with a one-component path opens
    /// the tree. Answered with `confirm` or `reject`.
    case folder(id: TransferID, tree: TransferID, path: [UInt8])
    /// A file of a sent tree: flows like `offer` (extension `folders`).
    case entry(Entry)
    /// The end of a sent tree: the receiver moves it into place and answers with `confirm`.
    case commit(tree: TransferID)
    /// Several messages in one record, handled as if each came in its own (extension
    /// `pipelining`, §8.3): small files cost no record, and no datagram, each.
    case batch([TransferMessage])
    /// In handshake message 2 only, after a `hello` granting `firstContact`, instead of the answer
    /// to the opening: the receiver's user is asked about this unknown sender, and the answer
    /// (`accept`, or `reject` reason `notApproved`) follows in a record (§8.5). No fields.
    case pending
    /// In handshake message 2 only, after a `hello` granting `busy`, instead of the answer to the
    /// opening: the receiver serves as many senders as it takes and cannot serve this one now. The
    /// sender closes the connection and comes back after about `retryAfterSeconds`; `ahead` other
    /// senders were told so before it and still wait (§8.6). The offer is not answered.
    case busy(retryAfterSeconds: UInt16, ahead: UInt8)
    /// In handshake message 2 only, after a `hello` granting `notTrusted`, instead of the answer
    /// to the opening: the receiver does not trust the sender's key. The offer is not answered; the
    /// connection ends as after a refusal (§8.7). No fields.
    case notTrusted

    /// A file inside a sent tree (`entry`).
    public struct Entry: Equatable, Sendable {
        public var id: TransferID
        public var tree: TransferID
        /// `nil` for a stream.
        public var size: UInt64?
        public var executable: Bool
        /// The path as it travels, the tree's top folder first (§8.4, Paths): at most `maxPathLength` bytes.
        public var path: [UInt8]

        public init(id: TransferID, tree: TransferID, size: UInt64?, executable: Bool, path: [UInt8]) {
            self.id = id
            self.tree = tree
            self.size = size
            self.executable = executable
            self.path = path
        }
    }

    public struct Offer: Equatable, Sendable {
        public var id: TransferID
        /// `nil` for a stream whose size is not known up front.
        public var size: UInt64?
        /// The name as it travels: at most `maxNameLength` bytes, which a peer may fill with
        /// anything (even nothing, or bytes that are not UTF-8). A receiver judges it (`name`,
        /// then `safeFileName`) and rejects that one file if it is unusable.
        public var nameBytes: [UInt8]

        /// The offered name, if its bytes are valid UTF-8.
        public var name: String? { String(validating: nameBytes, as: UTF8.self) }

        /// An offer of `name`, cut to `maxNameLength` bytes at a character boundary.
        public init(id: TransferID, size: UInt64?, name: String) {
            self.init(id: id, size: size, nameBytes: TransferMessage.nameBytes(name))
        }

        /// An offer with a name of arbitrary bytes (at most `maxNameLength` are kept).
        public init(id: TransferID, size: UInt64?, nameBytes: [UInt8]) {
            self.id = id
            self.size = size
            self.nameBytes = Array(nameBytes.prefix(TransferConstants.maxNameLength))
        }
    }

    public enum ConfirmStatus: UInt8, Sendable {
        case saved = 0
        case hashMismatch = 1
        case couldNotStore = 2
    }

    public enum RejectReason: UInt8, Sendable {
        case tooLarge = 1
        case couldNotStore = 2
        case badName = 3
        /// The path is already taken in its folder (extension `folders`).
        case exists = 4
        /// The entry's tree was never opened, or its top folder was refused (extension `folders`).
        case noFolder = 5
        /// The receiver's user did not accept this unknown sender, or did not answer in time
        /// (extension `firstContact`, §8.5): the connection ends.
        case notApproved = 6
    }
}

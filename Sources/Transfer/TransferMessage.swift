import Pipeline

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

    /// The type byte: which message this is.
    public enum Kind: UInt8, Sendable, CustomStringConvertible {
        case offer = 1, accept, data, ack, done, confirm, reject, bye, hello, zdata, folder, entry, commit, batch, pending

        public var description: String {
            switch self {
            case .offer: "offer"
            case .accept: "accept"
            case .data: "data"
            case .ack: "ack"
            case .done: "done"
            case .confirm: "confirm"
            case .reject: "reject"
            case .bye: "bye"
            case .hello: "hello"
            case .zdata: "zdata"
            case .folder: "folder"
            case .entry: "entry"
            case .commit: "commit"
            case .batch: "batch"
            case .pending: "pending"
            }
        }
    }

    public var kind: Kind {
        switch self {
        case .offer: .offer
        case .accept: .accept
        case .data: .data
        case .ack: .ack
        case .done: .done
        case .confirm: .confirm
        case .reject: .reject
        case .bye: .bye
        case .hello: .hello
        case .zdata: .zdata
        case .folder: .folder
        case .entry: .entry
        case .commit: .commit
        case .batch: .batch
        case .pending: .pending
        }
    }
}

extension TransferMessage {
    /// The wire form of this message.
    public func encoded() -> [UInt8] {
        var out: [UInt8] = []
        encode(into: &out)
        return out
    }

    /// Appends the wire form of this message to `out`.
    public func encode(into out: inout [UInt8]) {
        switch self {
        case .offer(let offer):
            out.append(Kind.offer.rawValue)
            out += offer.id.bytes
            out.appendBigEndian(offer.size ?? TransferConstants.unknownSize)
            out.append(UInt8(offer.nameBytes.count))
            out += offer.nameBytes
        case .accept(let id, let offset):
            out.append(Kind.accept.rawValue)
            out += id.bytes
            out.appendBigEndian(offset)
        case .data(let bytes):
            out.reserveCapacity(out.count + 1 + bytes.count)
            out.append(Kind.data.rawValue)
            out += bytes
        case .ack(let id, let received):
            out.append(Kind.ack.rawValue)
            out += id.bytes
            out.appendBigEndian(received)
        case .done(let id, let hash):
            out.append(Kind.done.rawValue)
            out += id.bytes
            out += hash
        case .confirm(let id, let status, let storedName):
            out.append(Kind.confirm.rawValue)
            out += id.bytes
            out.append(status.rawValue)
            let name = Self.nameBytes(storedName)
            out.append(UInt8(name.count))
            out += name
        case .reject(let id, let reason):
            out.append(Kind.reject.rawValue)
            out += id.bytes
            out.append(reason.rawValue)
        case .bye:
            out.append(Kind.bye.rawValue)
        case .hello(let extensions):
            out.append(Kind.hello.rawValue)
            out.appendBigEndian(extensions.rawValue)
        case .zdata(let originalSize, let frame):
            out.reserveCapacity(out.count + 3 + frame.count)
            out.append(Kind.zdata.rawValue)
            out.appendBigEndian(UInt16(truncatingIfNeeded: originalSize))
            out += frame
        case .folder(let id, let tree, let path):
            out.append(Kind.folder.rawValue)
            out += id.bytes
            out += tree.bytes
            Self.appendPath(path, to: &out)
        case .entry(let entry):
            out.append(Kind.entry.rawValue)
            out += entry.id.bytes
            out += entry.tree.bytes
            out.appendBigEndian(entry.size ?? TransferConstants.unknownSize)
            out.append(entry.executable ? 1 : 0)
            Self.appendPath(entry.path, to: &out)
        case .commit(let tree):
            out.append(Kind.commit.rawValue)
            out += tree.bytes
        case .batch(let messages):
            out.append(Kind.batch.rawValue)
            for message in messages {
                let start = out.count
                out += [0, 0]
                message.encode(into: &out)
                let length = out.count - start - 2
                out[start] = UInt8(truncatingIfNeeded: length >> 8)
                out[start + 1] = UInt8(truncatingIfNeeded: length)
            }
        case .pending:
            out.append(Kind.pending.rawValue)
        }
    }

    /// The length of `encoded()`, without encoding.
    public var wireLength: Int {
        switch self {
        case .offer(let offer): 1 + 16 + 8 + 1 + offer.nameBytes.count
        case .accept, .ack: 1 + 16 + 8
        case .data(let bytes): 1 + bytes.count
        case .done: 1 + 16 + TransferConstants.hashLength
        case .confirm(_, _, let name): 1 + 16 + 1 + 1 + Self.nameBytes(name).count
        case .reject: 1 + 16 + 1
        case .bye, .pending: 1
        case .hello: 5
        case .zdata(_, let frame): 3 + frame.count
        case .folder(_, _, let path): 1 + 32 + 2 + min(path.count, TransferConstants.maxPathLength)
        case .entry(let entry): 1 + 32 + 8 + 1 + 2 + min(entry.path.count, TransferConstants.maxPathLength)
        case .commit: 1 + 16
        case .batch(let messages): 1 + messages.reduce(0) { $0 + 2 + $1.wireLength }
        }
    }

    /// Whether this message may share a record with others in a `batch`.
    public var batchable: Bool { Self.mayShareARecord(kind) }

    /// Whether messages of `kind` may stand in a `batch`: all but `batch` itself, `hello`, `bye`
    /// (always alone in a final record) and `pending` (message 2 only).
    static func mayShareARecord(_ kind: Kind) -> Bool { ![.batch, .hello, .bye, .pending].contains(kind) }

    /// `messages` packed into as few messages as fit in `limit` bytes each, in order: a `batch`
    /// where several fit together, the message itself where it stands alone.
    public static func packed(_ messages: [TransferMessage], limit: Int) -> [TransferMessage] {
        var out: [TransferMessage] = []
        var group: [TransferMessage] = []
        var size = 1
        func flush() {
            if group.count == 1, let only = group.first { out.append(only) } else if !group.isEmpty { out.append(.batch(group)) }
            group.removeAll()
            size = 1
        }
        for message in messages {
            guard message.batchable, 1 + 2 + message.wireLength <= limit else {
                flush()
                out.append(message)
                continue
            }
            if size + 2 + message.wireLength > limit { flush() }
            group.append(message)
            size += 2 + message.wireLength
        }
        flush()
        return out
    }

    /// A path with its `u16` length; a sender never builds one over `maxPathLength` (`RelativePath.wire`).
    private static func appendPath(_ path: [UInt8], to out: inout [UInt8]) {
        let path = path.prefix(TransferConstants.maxPathLength)
        out.appendBigEndian(UInt16(path.count))
        out += path
    }

    /// A name's UTF-8 bytes, cut to `maxNameLength` at a character boundary (a cut inside a
    /// character would make the name invalid UTF-8, and the whole message malformed).
    static func nameBytes(_ name: String) -> [UInt8] {
        guard name.utf8.count > TransferConstants.maxNameLength else { return Array(name.utf8) }
        var cut = Substring(name)
        while cut.utf8.count > TransferConstants.maxNameLength { cut.removeLast() }
        return Array(cut.utf8)
    }

    /// Parses one message; every malformed input gives a `TransferMessageError`.
    public init(decoding bytes: some Collection<UInt8>) throws(TransferMessageError) {
        // One copy at most (none for an Array); the messages of a `batch` are read as slices of it.
        try self.init(parsing: Array(bytes)[...])
    }

    /// Parses one message from a slice, without copying it: the fields that keep bytes (`data`,
    /// names, paths) copy only their own.
    private init(parsing bytes: ArraySlice<UInt8>) throws(TransferMessageError) {
        var reader = ByteReader(bytes)
        do {
            guard let tag = Kind(rawValue: try reader.readUInt8()) else { throw TransferMessageError.unknownType }
            switch tag {
            case .offer:
                let id = try Self.readID(&reader)
                let size = try reader.readUInt64()
                // Any name bytes make a well-formed offer: whether the name is usable is the
                // receiver's call, for that file alone (docs/protocol.md §5, "Names").
                let nameBytes = Array(try reader.readBytes(Int(try reader.readUInt8())))
                self = .offer(Offer(id: id, size: size == TransferConstants.unknownSize ? nil : size, nameBytes: nameBytes))
            case .accept:
                self = .accept(id: try Self.readID(&reader), offset: try reader.readUInt64())
            case .data:
                let payload = reader.readRest()
                guard !payload.isEmpty else { throw TransferMessageError.emptyData }
                guard payload.count <= TransferConstants.maxDataPerRecord else { throw TransferMessageError.dataTooLarge }
                self = .data(Array(payload))
            case .ack:
                self = .ack(id: try Self.readID(&reader), received: try reader.readUInt64())
            case .done:
                self = .done(id: try Self.readID(&reader), hash: Array(try reader.readBytes(TransferConstants.hashLength)))
            case .confirm:
                let id = try Self.readID(&reader)
                guard let status = ConfirmStatus(rawValue: try reader.readUInt8()) else { throw TransferMessageError.badField }
                self = .confirm(id: id, status: status, storedName: try Self.readName(&reader))
            case .reject:
                let id = try Self.readID(&reader)
                guard let reason = RejectReason(rawValue: try reader.readUInt8()) else { throw TransferMessageError.badField }
                self = .reject(id: id, reason: reason)
            case .bye:
                self = .bye
            case .hello:
                // Bits this side does not know are kept: the receiver grants only what it knows.
                self = .hello(TransferExtensions(rawValue: try reader.readUInt32()))
            case .zdata:
                let originalSize = Int(try reader.readUInt16())
                guard (1...TransferConstants.maxCompressedChunk).contains(originalSize) else { throw TransferMessageError.badField }
                let frame = reader.readRest()
                guard !frame.isEmpty else { throw TransferMessageError.emptyData }
                guard frame.count <= TransferConstants.maxCompressedChunk else { throw TransferMessageError.dataTooLarge }
                self = .zdata(originalSize: originalSize, frame: Array(frame))
            case .folder:
                self = .folder(id: try Self.readID(&reader), tree: try Self.readID(&reader), path: try Self.readPath(&reader))
            case .entry:
                let id = try Self.readID(&reader), tree = try Self.readID(&reader)
                let size = try reader.readUInt64()
                let mode = try reader.readUInt8()
                guard mode <= 1 else { throw TransferMessageError.badField }
                self = .entry(Entry(id: id, tree: tree, size: size == TransferConstants.unknownSize ? nil : size,
                                    executable: mode == 1, path: try Self.readPath(&reader)))
            case .commit:
                self = .commit(tree: try Self.readID(&reader))
            case .batch:
                var messages: [TransferMessage] = []
                while !reader.isAtEnd {
                    let inner = try reader.readBytes(Int(try reader.readUInt16()))
                    // Only what may share a record: no batch in a batch, no hello, no bye (final),
                    // no pending (message 2 only). Judged by the type byte, before the inner message
                    // is parsed, so a batch can never make the parser recurse (a record of nested
                    // batches would otherwise go 21,000 levels deep).
                    if let type = inner.first, let kind = Kind(rawValue: type), !Self.mayShareARecord(kind) {
                        throw TransferMessageError.badField
                    }
                    messages.append(try TransferMessage(parsing: inner))
                }
                guard !messages.isEmpty else { throw TransferMessageError.emptyBatch }
                self = .batch(messages)
            case .pending:
                self = .pending
            }
            try reader.expectEnd()
        } catch let error as ByteReaderError {
            throw error == .truncated ? .truncated : .trailingBytes
        } catch let error as TransferMessageError {
            throw error
        } catch {
            throw .badField
        }
    }

    private static func readID(_ reader: inout ByteReader) throws -> TransferID {
        guard let id = TransferID(bytes: try reader.readBytes(TransferConstants.idLength)) else {
            throw TransferMessageError.truncated
        }
        return id
    }

    /// A path's bytes: any bytes of a legal length are well formed; whether the path is usable is
    /// the receiver's call for that entry (`RelativePath`).
    private static func readPath(_ reader: inout ByteReader) throws -> [UInt8] {
        let length = Int(try reader.readUInt16())
        guard length <= TransferConstants.maxPathLength else { throw TransferMessageError.badField }
        return Array(try reader.readBytes(length))
    }

    private static func readName(_ reader: inout ByteReader) throws -> String {
        let bytes = try reader.readBytes(Int(try reader.readUInt8()))
        guard let name = String(validating: bytes, as: UTF8.self) else { throw TransferMessageError.badName }
        return name
    }
}

public enum TransferMessageError: Error, Equatable, Sendable, CustomStringConvertible {
    case unknownType, truncated, trailingBytes, emptyData, dataTooLarge, badName, badField
    /// A `batch` with no message in it.
    case emptyBatch

    /// What was wrong, in words for a log or an error message.
    public var description: String {
        switch self {
        case .unknownType: "a message of an unknown type"
        case .truncated: "a truncated message"
        case .trailingBytes: "a message with bytes after its last field"
        case .emptyData: "an empty data message"
        case .dataTooLarge: "a data message over \(TransferConstants.maxDataPerRecord) bytes (zdata: \(TransferConstants.maxCompressedChunk))"
        case .badName: "a stored name that is not valid UTF-8"
        case .badField: "a field with a value out of range"
        case .emptyBatch: "an empty batch message"
        }
    }
}

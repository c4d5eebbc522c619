import Pipeline

extension TransferMessage {
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
                    // no pending, busy or notTrusted (message 2 only). Judged by the type byte, before the inner message
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
            case .notTrusted:
                self = .notTrusted
            case .busy:
                let retryAfter = try reader.readUInt16()
                guard (1...TransferConstants.maxBusyRetryAfter).contains(retryAfter) else { throw TransferMessageError.badField }
                self = .busy(retryAfterSeconds: retryAfter, ahead: try reader.readUInt8())
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

import Pipeline

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
        case .notTrusted:
            out.append(Kind.notTrusted.rawValue)
        case .busy(let retryAfter, let ahead):
            out.append(Kind.busy.rawValue)
            out.appendBigEndian(retryAfter)
            out.append(ahead)
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
        case .bye, .pending, .notTrusted: 1
        case .hello: 5
        case .busy: 4
        case .zdata(_, let frame): 3 + frame.count
        case .folder(_, _, let path): 1 + 32 + 2 + min(path.count, TransferConstants.maxPathLength)
        case .entry(let entry): 1 + 32 + 8 + 1 + 2 + min(entry.path.count, TransferConstants.maxPathLength)
        case .commit: 1 + 16
        case .batch(let messages): 1 + messages.reduce(0) { $0 + 2 + $1.wireLength }
        }
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
}

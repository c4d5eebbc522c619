extension PublicKey {
    /// A public key as people hand it over: the `blesend-pub1:…` line with white space around it,
    /// the same line broken by a terminal or a mail program (white space inside), or a whole
    /// `.pub` file (its `#` comment lines are skipped). Words after a complete key on its line
    /// are ignored. The checksum still catches a typo or a line cut short.
    ///
    /// Errors: a secret key (`.badEncoding`, with a hint never to share it), no key at all
    /// (`.badEncoding`), two keys (`.wrongKeyCount`), a damaged key (`.badEncoding`, `.badChecksum`).
    public init(pasted text: some Collection<UInt8>) throws(KeyError) {
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        let lines = text.split(separator: 0x0A).filter { line in line.trimmedASCIIWhitespace().first != UInt8(ascii: "#") }
        let joined = Array(lines.joined().filter { !isSpace($0) })
        if joined.contains(prefix: Array(KeyText.secretPrefix.utf8)) { throw KeyError.secretWherePublic }
        let prefix = Array(KeyText.publicPrefix.utf8)
        switch joined.occurrences(of: prefix) {
        case 0:
            throw KeyError(.badEncoding, "no blesend public key in the text (it starts with \(KeyText.publicPrefix))",
                           hint: "copy the whole line, or give the .pub file's path")
        case 1:
            break
        default:
            throw KeyError(.wrongKeyCount, "the text holds more than one key", hint: "give one key at a time")
        }
        do {
            try self.init(text: String(decoding: joined.dropFirstUntil(prefix), as: UTF8.self))
        } catch {
            // A complete key followed by words on its line (a note, a name): the key alone.
            guard let line = lines.first(where: { $0.contains(prefix: prefix) }),
                  let word = line.trimmedASCIIWhitespace().split(whereSeparator: isSpace).first(where: { $0.starts(with: prefix) }),
                  let key = try? PublicKey(text: String(decoding: word, as: UTF8.self)) else { throw error }
            self = key
        }
    }
}

extension KeyError {
    /// A secret key given where a peer's public key belongs.
    static let secretWherePublic = KeyError(
        .badEncoding, "that is a secret key; give the peer's public key (blesend-pub1:…) or its .pub file",
        hint: "never paste a secret key anywhere; make a new key pair if it was shared")
}

extension Collection<UInt8> {
    /// Whether `prefix` occurs anywhere in `self`.
    func contains(prefix: [UInt8]) -> Bool { occurrences(of: prefix) > 0 }

    /// How many times `needle` occurs (overlaps counted).
    func occurrences(of needle: [UInt8]) -> Int {
        let bytes = Array(self)
        guard !needle.isEmpty, bytes.count >= needle.count else { return 0 }
        return (0...(bytes.count - needle.count)).filter { bytes[$0..<$0 + needle.count].elementsEqual(needle) }.count
    }
}

extension Array<UInt8> {
    /// `self` from the first occurrence of `needle` on (all of it if there is none).
    func dropFirstUntil(_ needle: [UInt8]) -> ArraySlice<UInt8> {
        guard count >= needle.count else { return self[...] }
        for start in 0...(count - needle.count) where self[start..<start + needle.count].elementsEqual(needle) {
            return self[start...]
        }
        return self[...]
    }
}

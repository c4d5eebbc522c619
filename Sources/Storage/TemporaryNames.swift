/// Names of blerecv's hidden temporaries in an output folder: `.STEM.TAG-XXXXXX.blesend-part`;
/// a partial file kept across runs has its checkpoint record beside it under the same name with
/// `.blesend-keep` (and, while that record is replaced, `.blesend-keep-new`) for the suffix.
///
/// `TAG` names the receiver that made it (the CLI derives it from the receiver's public key,
/// `PublicKey.fileTag`), so that a receiver removing leftovers at start removes only its own, and
/// never those of another receiver sharing the folder; `XXXXXX` is random. The stem (the file's
/// or folder's name, cut to at most 100 bytes at a character boundary) is only for people.
struct TemporaryNames: Sendable {
    static let suffix = ".blesend-part"
    static let recordSuffix = ".blesend-keep"
    static let newRecordSuffix = ".blesend-keep-new"
    private static let suffixes = [suffix, recordSuffix, newRecordSuffix]
    static let randomLength = 6
    private static let letters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".utf8)

    let tag: String

    /// A tag is 1 to 32 lowercase letters and digits.
    static func isValidTag(_ tag: String) -> Bool {
        !tag.isEmpty && tag.utf8.count <= 32 && tag.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x7A).contains($0) }
    }

    /// A fresh name for a temporary of `stem`.
    func fresh(for stem: String) -> String {
        var cut = Substring(stem)
        while cut.utf8.count > 100 { cut.removeLast() }
        var random = SystemRandomNumberGenerator()
        let tail = (0..<Self.randomLength).map { _ in Self.letters[Int(random.next(upperBound: UInt(Self.letters.count)))] }
        return ".\(cut).\(tag)-\(String(decoding: tail, as: UTF8.self))\(Self.suffix)"
    }

    /// Whether `name` is one this scheme makes with this tag: `.`, anything, `.TAG-`, six of the
    /// random letters, one of the suffixes.
    func isOurs(_ name: [UInt8]) -> Bool {
        Self.suffixes.contains { isOurs(name, suffix: $0) }
    }

    private func isOurs(_ name: [UInt8], suffix: String) -> Bool {
        let ending = Array(".\(tag)-".utf8)
        let suffix = Array(suffix.utf8)
        let fixed = ending.count + Self.randomLength + suffix.count
        guard name.first == UInt8(ascii: "."), name.count > fixed, name.reversed().starts(with: suffix.reversed()) else { return false }
        let randomStart = name.count - suffix.count - Self.randomLength
        let random = name[randomStart..<(name.count - suffix.count)]
        return Array(name[(randomStart - ending.count)..<randomStart]) == ending && random.allSatisfy { Self.letters.contains($0) }
    }

    /// The checkpoint record's name for the temporary `data`.
    static func record(for data: String) -> String {
        String(data.dropLast(suffix.utf8.count)) + recordSuffix
    }

    /// The temporary a checkpoint record named `record` is for; nil when `record` is no record's name.
    static func data(forRecord record: String) -> String? {
        record.hasSuffix(recordSuffix) ? String(record.dropLast(recordSuffix.utf8.count)) + suffix : nil
    }
}

extension TemporaryNames {
    /// Whether `name` is a kept partial's checkpoint record (a file's or a folder's) of any
    /// receiver: `.`, anything, `.blesend-keep`.
    static func isKeptRecord(_ name: [UInt8]) -> Bool {
        let suffix = Array(recordSuffix.utf8)
        return name.first == UInt8(ascii: ".") && name.count > suffix.count + 1 && name.reversed().starts(with: suffix.reversed())
    }
}

#if canImport(Glibc)
import Glibc
#endif
import Keys
import Sodium

/// `key-text`: user-supplied text into the key parsers: `PublicKey(text:)` (a key pasted on the
/// command line), `Identity(secretText:)`, and whole `.pub` / secret key files (`KeyFile`: comments,
/// blank lines, exactly one key line). Every parser sees every input.
///
/// Invariants:
/// - a parsed key's text form is exactly the trimmed input (base64url without padding of 36 bytes has
///   one spelling, so no second text names the same key), and parsing that text gives the key back;
/// - a parsed secret key's public key is X25519 of it;
/// - a key parsed from a file appears verbatim in the file; the fingerprint is 8 groups of 4 hex digits.
let keyTextTarget = FuzzTarget(
    name: "key-text",
    summary: "text into PublicKey(text:), Identity(secretText:) and KeyFile contents; round trip",
    run: runKeyText,
    seeds: keyTextSeeds)

private func trimmed(_ bytes: [UInt8]) -> [UInt8] {
    let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
    guard let first = bytes.firstIndex(where: { !isSpace($0) }),
          let last = bytes.lastIndex(where: { !isSpace($0) }) else { return [] }
    return Array(bytes[first...last])
}

private func checkPublicKey(_ key: PublicKey) {
    require(key.bytes.count == 32, "public key of \(key.bytes.count) bytes")
    require((try? PublicKey(text: key.text)) == key, "the text form does not parse back to the key")
    let fingerprint = Array(key.fingerprint.utf8)
    let hex = Set("0123456789abcdef".utf8)
    require(fingerprint.count == 39 && fingerprint.enumerated().allSatisfy { index, char in
        index % 5 == 4 ? char == UInt8(ascii: " ") : hex.contains(char)
    }, "fingerprint \(key.fingerprint)")
}

private func checkIdentity(_ identity: Identity) {
    guard let derived = try? X25519.publicKey(for: identity.secretKey) else { fatalError("X25519 failed") }
    require(derived == identity.publicKey.bytes, "secret and public key do not match")
    var text = identity.secretTextBytes()
    defer { secureZero(&text) }
    guard let again = try? Identity(secretText: text) else { fatalError("the secret's text form does not parse") }
    require(again.secretKey == identity.secretKey, "the secret's text form parses to another key")
    checkPublicKey(identity.publicKey)
}

private func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    guard !needle.isEmpty, haystack.count >= needle.count else { return needle.isEmpty }
    return (0...(haystack.count - needle.count)).contains { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
}

private func runKeyText(_ bytes: [UInt8]) {
    let string = String(decoding: bytes, as: UTF8.self)
    if let key = try? PublicKey(text: string) {
        require(Array(key.text.utf8) == trimmed(Array(string.utf8)), "a second spelling of a public key parsed")
        checkPublicKey(key)
    }
    if let identity = try? Identity(secretText: bytes) {
        var text = identity.secretTextBytes()
        defer { secureZero(&text) }
        require(text == trimmed(bytes), "a second spelling of a secret key parsed")
        checkIdentity(identity)
    }
    if let key = try? KeyFile.publicKey(fileContents: bytes, path: "fuzz.pub") {
        require(contains(bytes, Array(key.text.utf8)), "a key file's key is not in the file")
        checkPublicKey(key)
    }
    if let identity = try? KeyFile.identity(fileContents: bytes, path: "fuzz.key") {
        var text = identity.secretTextBytes()
        defer { secureZero(&text) }
        require(contains(bytes, text), "a secret key file's key is not in the file")
        checkIdentity(identity)
    }
}

/// Key texts and the files `KeyFile.writeKeyPair` and `TrustStore.add` really write, read back
/// from a temporary directory.
private func keyTextSeeds() -> [FuzzSeed] {
    let sender = FixedKeys.trustedSender
    var seeds = [
        FuzzSeed("public-text", Array(sender.publicKey.text.utf8)),
        FuzzSeed("public-text-padded", Array(("  \t" + sender.publicKey.text + " \r\n").utf8)),
        FuzzSeed("secret-text", sender.secretTextBytes()),
    ]
    var template = Array("/tmp/blesend-fuzz-keys.XXXXXX".utf8CString)
    guard let created = mkdtemp(&template) else { return seeds }
    let directory = String(cString: created)
    defer {
        for file in ["id", "id.pub", "trusted/alice.pub"] { unlink(directory + "/" + file) }
        rmdir(directory + "/trusted")
        rmdir(directory)
    }
    do {
        try KeyFile.writeKeyPair(sender, path: directory + "/id", force: false)
        try TrustStore.add(FixedKeys.strangerSender.publicKey, name: "alice", directory: directory + "/trusted")
    } catch {
        return seeds
    }
    for (name, file) in [("secret-key-file", "id"), ("public-key-file", "id.pub"), ("trust-file", "trusted/alice.pub")] {
        if let contents = readSmallFile(directory + "/" + file) { seeds.append(FuzzSeed(name, contents)) }
    }
    return seeds
}

private func readSmallFile(_ path: String) -> [UInt8]? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var buffer = [UInt8](repeating: 0, count: 4096)
    let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
    return count > 0 ? Array(buffer.prefix(count)) : nil
}

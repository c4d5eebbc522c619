import Foundation
import Testing
@testable import Keys

/// A fresh empty directory for one test, removed afterwards by the caller.
func temporaryDirectory() throws -> String {
    let path = NSTemporaryDirectory() + "blesend-keys-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    return path
}

func mode(of path: String) throws -> Int {
    (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? -1
}

@Test func publicKeyTextRoundTrips() throws {
    let identity = Identity.generate()
    let text = identity.publicKey.text
    #expect(text.hasPrefix("blesend-pub1:"))
    #expect(text.count == "blesend-pub1:".count + 48)
    #expect(try PublicKey(text: "  \(text)\n") == identity.publicKey)
}

@Test func secretKeyTextRoundTrips() throws {
    let identity = Identity.generate()
    let again = try Identity(secretText: identity.secretTextBytes())
    #expect(again.publicKey == identity.publicKey)
    #expect(again.secretKey == identity.secretKey)
}

@Test func fingerprintsShow128BitsInGroupsOfFourAndAreStable() throws {
    let a = Identity.generate().publicKey, b = Identity.generate().publicKey
    // 32 hex digits (128 bits) in eight groups of four, one space apart: 39 characters.
    #expect(a.fingerprint.count == 39)
    let groups = a.fingerprint.split(separator: " ", omittingEmptySubsequences: false)
    #expect(groups.count == 8)
    #expect(groups.allSatisfy { $0.count == 4 && $0.allSatisfy { "0123456789abcdef".contains($0) } })
    #expect(a.fingerprint == (try PublicKey(text: a.text)).fingerprint)
    #expect(a.fingerprint != b.fingerprint)
}

@Test func fingerprintOfTheDocumentedKey() throws {
    // keys/test-only/alice.pub, as keys/README.md shows it; the first 16 digits are the 64-bit
    // fingerprint earlier versions printed.
    let alice = try PublicKey(text: "blesend-pub1:CipmYBZ6dXcVk1qufq2YCoKzptP2TwyMMquWgQ9usjqAbNan")
    #expect(alice.fingerprint == "0c5f 40b9 d0c9 1cf3 35cb 14c2 5c9f cc81")
}

@Test func badKeyTextIsRefusedWithTheRightCode() throws {
    let good = Identity.generate()
    let text = good.publicKey.text
    var typo = Array(text)
    let i = typo.count - 10
    typo[i] = typo[i] == "A" ? "B" : "A"
    let cases: [(String, KeyError.Code)] = [
        ("", .badEncoding),
        ("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG", .badEncoding),
        ("age1qyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqs3290gq", .badEncoding),
        (String(text.dropLast(3)), .badEncoding),
        (text + "AAAA", .badEncoding),
        (text.replacingOccurrences(of: "blesend-pub1:", with: "blesend-pub1:!"), .badEncoding),
        (String(typo), .badChecksum),
        (String(decoding: good.secretTextBytes(), as: UTF8.self), .badEncoding),
    ]
    for (input, code) in cases {
        #expect(throws: KeyError.self, "input \(input)") { try PublicKey(text: input) }
        do { _ = try PublicKey(text: input) } catch { #expect(error.code == code, "input \(input)") }
    }
}

@Test func keygenWritesBothFilesWithTheRightModesAndRefusesToOverwrite() throws {
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let path = dir + "/id"
    let identity = Identity.generate()
    try KeyFile.writeKeyPair(identity, path: path, force: false)
    #expect(try mode(of: path) == 0o600)
    #expect(try mode(of: path + ".pub") == 0o644)
    #expect(try KeyFile.loadIdentity(path: path).publicKey == identity.publicKey)
    #expect(try KeyFile.loadPublicKey(path: path + ".pub") == identity.publicKey)

    let other = Identity.generate()
    #expect(throws: KeyError.self) { try KeyFile.writeKeyPair(other, path: path, force: false) }
    #expect(try KeyFile.loadIdentity(path: path).publicKey == identity.publicKey, "old key must survive")
    try KeyFile.writeKeyPair(other, path: path, force: true)
    #expect(try KeyFile.loadIdentity(path: path).publicKey == other.publicKey)
}

@Test func aSecretKeyOthersCanReadIsRefused() throws {
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let path = dir + "/id"
    try KeyFile.writeKeyPair(Identity.generate(), path: path, force: false)
    for bad in [0o644, 0o640, 0o604, 0o660] {
        chmod(path, mode_t(bad))
        do {
            _ = try KeyFile.loadIdentity(path: path)
            Issue.record("mode \(String(bad, radix: 8)) accepted")
        } catch {
            #expect(error.code == .insecurePermissions)
            #expect(error.hint?.contains("chmod 600") == true)
        }
    }
    chmod(path, 0o400)
    #expect(throws: Never.self) { try KeyFile.loadIdentity(path: path) }
}

@Test func keyFilesWithCommentsGarbageOrSeveralKeys() throws {
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let key = Identity.generate().publicKey
    let cases: [(String, KeyError.Code?)] = [
        ("# a comment\n\n\(key.text)\n# trailing\n", nil),
        ("\(key.text)", nil),
        ("# only a comment\n", .wrongKeyCount),
        ("\(key.text)\n\(key.text)\n", .wrongKeyCount),
        ("garbage\n", .badEncoding),
        (String(key.text.prefix(30)), .badEncoding),
    ]
    for (index, (contents, expected)) in cases.enumerated() {
        let path = "\(dir)/k\(index).pub"
        try contents.write(toFile: path, atomically: false, encoding: .utf8)
        do {
            #expect(try KeyFile.loadPublicKey(path: path) == key)
            #expect(expected == nil)
        } catch {
            #expect(error.code == expected, "case \(index)")
        }
    }
    #expect(throws: KeyError.self) { try KeyFile.loadPublicKey(path: dir + "/missing.pub") }
    #expect(throws: KeyError.self) { try KeyFile.loadPublicKey(path: dir) }
}

@Test func resolvingAKeyArgumentTakesTextOrAFile() throws {
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let identity = Identity.generate()
    try KeyFile.writeKeyPair(identity, path: dir + "/id", force: false)
    #expect(try KeyFile.resolvePublicKey(identity.publicKey.text) == identity.publicKey)
    #expect(try KeyFile.resolvePublicKey(dir + "/id.pub") == identity.publicKey)
    #expect(throws: KeyError.self) { try KeyFile.resolvePublicKey(String(decoding: identity.secretTextBytes(), as: UTF8.self)) }
    #expect(throws: KeyError.self) { try KeyFile.resolvePublicKey(dir + "/nothing-here") }
}

@Test func trustDirectoryLoadsAddsAndRefusesDuplicates() throws {
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let trust = dir + "/keys"
    let alice = Identity.generate().publicKey, bob = Identity.generate().publicKey
    try TrustStore.add(alice, name: "alice", directory: trust)
    try TrustStore.add(bob, name: "bob-laptop", directory: trust)
    let store = try TrustStore.load(directory: trust)
    #expect(store.peers.map(\.name) == ["alice", "bob-laptop"])
    #expect(store.name(for: alice.bytes) == "alice")
    #expect(store.name(for: Identity.generate().publicKey.bytes) == nil)
    #expect(store.name(for: [1, 2, 3]) == nil)

    #expect(throws: KeyError.self) { try TrustStore.add(alice, name: "alice2", directory: trust) }
    #expect(throws: KeyError.self) { try TrustStore.add(Identity.generate().publicKey, name: "alice", directory: trust) }
    for badName in ["../evil", ".hidden", "a/b", "", "sp ace", String(repeating: "x", count: 65)] {
        #expect(throws: KeyError.self, "name \(badName)") { try TrustStore.add(Identity.generate().publicKey, name: badName, directory: trust) }
    }
    try "garbage".write(toFile: trust + "/broken.pub", atomically: false, encoding: .utf8)
    do {
        _ = try TrustStore.load(directory: trust)
        Issue.record("a broken .pub was accepted")
    } catch {
        #expect(error.message.contains("broken.pub"))
    }
    #expect(throws: KeyError.self) { try TrustStore.load(directory: dir + "/missing") }
}

@Test func aTrustDirectoryOrKeyOthersCanWriteIsRefused() throws {
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let trust = dir + "/keys"
    try TrustStore.add(Identity.generate().publicKey, name: "alice", directory: trust)
    func loadCode() -> KeyError.Code? {
        do {
            _ = try TrustStore.load(directory: trust)
            return nil
        } catch {
            return error.code
        }
    }
    func addCode() -> KeyError.Code? {
        do {
            try TrustStore.add(Identity.generate().publicKey, name: "bob", directory: trust)
            return nil
        } catch {
            return error.code
        }
    }
    #expect(loadCode() == nil)
    for bad in [0o775, 0o757, 0o777, 0o1777, 0o770] {
        chmod(trust, mode_t(bad))
        #expect(loadCode() == .writableByOthers, "directory mode \(String(bad, radix: 8))")
        // Adding a key to it is refused as well: add reads the directory first.
        #expect(addCode() == .writableByOthers, "add, mode \(String(bad, radix: 8))")
    }
    chmod(trust, 0o755)
    for bad in [0o666, 0o646, 0o664] {
        chmod(trust + "/alice.pub", mode_t(bad))
        #expect(loadCode() == .writableByOthers, "key mode \(String(bad, radix: 8))")
    }
    chmod(trust + "/alice.pub", 0o600)
    #expect(loadCode() == nil)
    // A symlink in place of a .pub is refused, not followed.
    try KeyFile.writeKeyPair(Identity.generate(), path: dir + "/elsewhere", force: false)
    symlink(dir + "/elsewhere.pub", trust + "/linked.pub")
    #expect(loadCode() == .trustDirectory)
    unlink(trust + "/linked.pub")
    // Owned by another user (who could chmod it back): refused. Needs root to hand it over.
    if geteuid() == 0 {
        chown(trust + "/alice.pub", 4242, 4242)
        #expect(loadCode() == .writableByOthers)
        chown(trust + "/alice.pub", 0, 0)
        chown(trust, 4242, 4242)
        #expect(loadCode() == .writableByOthers)
        chown(trust, 0, 0)
        #expect(loadCode() == nil)
    }
}

/// A running receiver's trust directory (issue 23): read again only when it changed, a key added
/// or removed shows at the next refresh, and a directory that fails the checks trusts nobody until
/// it passes them again.
@Test func aTrustDirectoryIsReadAgainWhenItChanges() throws {
    let dir = try temporaryDirectory()
    let trust = dir + "/trust"
    let alice = Identity.generate().publicKey, bob = Identity.generate().publicKey
    try TrustStore.add(alice, name: "alice", directory: trust)
    var watched = try TrustDirectory(path: trust)
    #expect(watched.store.peers.map(\.name) == ["alice"])
    #expect(watched.refresh() == .unchanged)

    try TrustStore.add(bob, name: "bob", directory: trust)
    #expect(watched.refresh() == .reloaded(added: ["bob"], removed: []))
    #expect(watched.store.name(for: bob.bytes) == "bob")
    #expect(watched.refresh() == .unchanged)

    #expect(unlink(trust + "/alice.pub") == 0)
    #expect(watched.refresh() == .reloaded(added: [], removed: ["alice"]))
    #expect(watched.store.name(for: alice.bytes) == nil)

    // A file replaced in place under the same name (another key) is seen, as is a chmod.
    #expect(unlink(trust + "/bob.pub") == 0)
    try TrustStore.add(alice, name: "bob", directory: trust)
    #expect(watched.refresh() == .reloaded(added: ["bob"], removed: ["bob"]))
    #expect(watched.store.name(for: alice.bytes) == "bob" && watched.store.name(for: bob.bytes) == nil)
    #expect(chmod(trust + "/bob.pub", 0o666) == 0)
    guard case .unusable(let problem) = watched.refresh() else { Issue.record("a .pub others may write was taken"); return }
    #expect(problem.code == .writableByOthers)
    #expect(watched.store.peers.isEmpty, "nobody is trusted while the directory fails its checks")
    #expect(watched.refresh() == .unusable(problem), "and it stays so at every look")
    #expect(chmod(trust + "/bob.pub", 0o644) == 0)
    #expect(watched.refresh() == .reloaded(added: ["bob"], removed: []))
}

@Test func keyFileContentsParseWithoutTouchingTheDisk() throws {
    let identity = Identity.generate()
    let pub = Array("# a comment\n\n  \(identity.publicKey.text)  \r\n# another\n".utf8)
    #expect(try KeyFile.publicKey(fileContents: pub, path: "x.pub") == identity.publicKey)
    let secret = Array("# secret\n".utf8) + identity.secretTextBytes() + [0x0A]
    #expect(try KeyFile.identity(fileContents: secret, path: "x").publicKey == identity.publicKey)
    let two = Array("\(identity.publicKey.text)\n\(identity.publicKey.text)\n".utf8)
    #expect(throws: KeyError.self) { try KeyFile.publicKey(fileContents: two, path: "x.pub") }
    do {
        _ = try KeyFile.publicKey(fileContents: Array("# only comments\n".utf8), path: "x.pub")
        Issue.record("a file without a key parsed")
    } catch {
        #expect(error.code == .wrongKeyCount)
        #expect(error.message.hasPrefix("x.pub"))
    }
}

/// Issue 20: every copy of a secret key's text is wiped after use. On a thread of its own, a key
/// is made, written with `writeKeyPair` and loaded three times with `loadIdentity`; afterwards no
/// copy of its text may remain anywhere in this process's writable memory, freed heap blocks
/// included (freed memory keeps its bytes until it is reused, which is how unwiped copies linger).
@Test func noCopyOfASecretKeysTextOutlivesWritingAndLoadingIt() throws {
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let path = dir + "/id"
    // What to look for: the 48 characters after `blesend-sec1:`, held only masked.
    let mask: UInt8 = 0x5A
    nonisolated(unsafe) var masked: [UInt8] = []
    nonisolated(unsafe) var loaded = 0
    nonisolated(unsafe) var failure: String?
    ProcessMemory.onOwnThread {
        let identity = Identity.generate()
        var text = identity.secretTextBytes()
        masked = text.dropFirst(13).map { $0 ^ mask }
        text.withUnsafeMutableBytes { if let base = $0.baseAddress { explicit_bzero(base, $0.count) } }
        do {
            try KeyFile.writeKeyPair(identity, path: path, force: false)
            for _ in 0..<3 where try KeyFile.loadIdentity(path: path).publicKey == identity.publicKey { loaded += 1 }
        } catch {
            failure = "\(error)"
        }
    }
    #expect(failure == nil)
    #expect(loaded == 3 && masked.count == 48)
    let left = try #require(ProcessMemory.occurrences(ofMasked: masked, mask: mask), "cannot read /proc/self/mem")
    #expect(left.isEmpty, "\(left.count) copies of the secret key's text left in memory")
}

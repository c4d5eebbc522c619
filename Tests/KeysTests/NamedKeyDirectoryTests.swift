import Foundation
import Testing
@testable import Keys

/// The receiver's trust directory and the sender's address book (`NamedKeyDirectory`): add is
/// idempotent, a taken name or key is refused with the command that frees it, remove and rename
/// work by name or fingerprint, and a running receiver (`TrustDirectory`) sees each change.

private func fingerprintWithoutSpaces(_ key: PublicKey) -> String { key.fingerprint.replacingOccurrences(of: " ", with: "") }

@Test(arguments: [NamedKeyDirectory.Kind.trustedSenders, .receivers])
func addIsIdempotentAndRefusesTakenNamesAndKeys(kind: NamedKeyDirectory.Kind) throws {
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let book = NamedKeyDirectory(path: dir + "/made/on/demand", kind: kind, directoryOption: " --trust x")
    let alice = Identity.generate().publicKey, bob = Identity.generate().publicKey
    let path = try book.add(alice, name: "alice")
    #expect(path == dir + "/made/on/demand/alice.pub")
    #expect(try mode(of: book.path) == (kind == .receivers ? 0o700 : 0o755))
    #expect(try book.add(alice, name: "alice") == path, "the same key under the same name again changes nothing")
    #expect(try book.entries().map(\.name) == ["alice"])

    // (what is added, name, the error's code, what its hint must say)
    let refusals: [(PublicKey, String, KeyError.Code, [String])] = [
        (bob, "alice", .nameTaken, ["\(kind.command) rename alice alice-old --trust x", "\(kind.command) remove alice --trust x"]),
        (alice, "alice2", .keyTaken, ["\(kind.command) rename alice alice2 --trust x"]),
        (bob, "../evil", .trustDirectory, ["letters, digits"]),
        (bob, ".hidden", .trustDirectory, ["letters, digits"]),
        (bob, "sp ace", .trustDirectory, ["letters, digits"]),
    ]
    for (key, name, code, hints) in refusals {
        do {
            try book.add(key, name: name)
            Issue.record("\(name) was added")
        } catch {
            #expect(error.code == code, "\(name): \(error)")
            for hint in hints { #expect(error.hint?.contains(hint) == true, "\(name): \(error.hint ?? "no hint")") }
        }
    }
    #expect(try book.entries().map(\.name) == ["alice"], "nothing refused was written")
}

@Test func removeAndRenameByNameOrFingerprint() throws {
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let book = NamedKeyDirectory.receiverBook(at: dir + "/receivers")
    let alice = Identity.generate().publicKey, bob = Identity.generate().publicKey, carol = Identity.generate().publicKey
    for (key, name) in [(alice, "alice"), (bob, "bob"), (carol, "carol")] { try book.add(key, name: name) }

    #expect(try book.remove("alice").map(\.name) == ["alice"])
    #expect(try book.remove(bob.fingerprint).map(\.name) == ["bob"], "by fingerprint, with spaces")
    #expect(try book.rename(fingerprintWithoutSpaces(carol).uppercased(), to: "carol-old").hasSuffix("/carol-old.pub"),
            "by fingerprint, without spaces, any case")
    #expect(try book.entries() == [TrustStore.Peer(name: "carol-old", key: carol)])
    #expect(try book.rename("carol-old", to: "carol-old").hasSuffix("/carol-old.pub"), "to its own name: nothing to do")
    let text = try String(contentsOfFile: book.filePath("carol-old"), encoding: .utf8)
    #expect(text.contains("\"carol-old\""), "the file's comment names it anew: \(text)")

    try book.add(alice, name: "alice")
    // (what is asked, its error's code)
    let refusals: [(() throws(KeyError) -> Void, KeyError.Code)] = [
        ({ () throws(KeyError) in try book.remove("nobody") }, .unknownName),
        ({ () throws(KeyError) in try book.remove("0000 0000 0000 0000 0000 0000 0000 0000") }, .unknownName),
        ({ () throws(KeyError) in try book.rename("nobody", to: "x") }, .unknownName),
        ({ () throws(KeyError) in try book.rename("alice", to: "carol-old") }, .nameTaken),
        ({ () throws(KeyError) in try book.rename("alice", to: "../x") }, .trustDirectory),
    ]
    for (index, (ask, code)) in refusals.enumerated() {
        do {
            try ask()
            Issue.record("row \(index) went through")
        } catch {
            #expect(error.code == code, "row \(index): \(error)")
        }
    }
    do {
        try book.remove("nobody")
    } catch {
        #expect(error.hint?.contains("blesend receivers list") == true)
    }
    #expect(try book.entries().map(\.name) == ["alice", "carol-old"], "nothing refused was changed")
}

@Test func anAddressBookMissingIsEmptyAndOneOthersMayWriteIsRefused() throws {
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let book = NamedKeyDirectory.receiverBook(at: dir + "/receivers")
    #expect(try book.entries().isEmpty)
    #expect(try book.key(named: "alice") == nil)
    let alice = Identity.generate().publicKey
    try book.add(alice, name: "alice")
    #expect(try book.key(named: "alice") == alice)
    chmod(book.path, 0o777)
    let error = #expect(throws: KeyError.self) { _ = try book.key(named: "alice") }
    #expect(error?.code == .writableByOthers, "whoever can write it could make us send to their key")
}

@Test func createIfMissingMakesParentsAndTheModeAsked() throws {
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let trust = NamedKeyDirectory.trust(at: dir + "/a/b/trusted")
    #expect(try trust.createIfMissing(mode: 0o700))
    #expect(try mode(of: trust.path) == 0o700)
    #expect(try trust.createIfMissing(mode: 0o700) == false, "there already")
    #expect(try TrustDirectory(path: trust.path).store.peers.isEmpty, "an empty trust directory passes the checks")
}

/// Removing or renaming with these commands is what a running receiver picks up: its
/// `TrustDirectory` (`LiveTrust`, read before every handshake) sees the file gone or moved.
@Test func aRunningReceiverSeesRemoveAndRename() throws {
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let trust = NamedKeyDirectory.trust(at: dir + "/trust")
    let alice = Identity.generate().publicKey, bob = Identity.generate().publicKey
    try trust.add(alice, name: "alice")
    try trust.add(bob, name: "bob")
    var watched = try TrustDirectory(path: trust.path)
    try trust.rename("alice", to: "alice-old")
    #expect(watched.refresh() == .reloaded(added: ["alice-old"], removed: ["alice"]))
    #expect(watched.store.name(for: alice.bytes) == "alice-old")
    try trust.remove("bob")
    #expect(watched.refresh() == .reloaded(added: [], removed: ["bob"]))
    #expect(watched.store.name(for: bob.bytes) == nil, "refused from the next handshake on")
}

/// Keys as people paste them (`PublicKey(pasted:)`): what is accepted, and the error of what is not.
@Test func pastedKeysAreAcceptedWithWhiteSpaceAndRefusedWithTypedErrors() throws {
    let identity = Identity.generate()
    let key = identity.publicKey, text = key.text
    let cut = text.index(text.startIndex, offsetBy: 30)
    let accepted: [(String, String)] = [
        ("as it is", text),
        ("white space around", "  \t\(text) \r\n\n"),
        ("wrapped by a terminal", String(text[..<cut]) + "\n   " + String(text[cut...]) + "\n"),
        ("a space inside", String(text[..<cut]) + " " + String(text[cut...])),
        ("a whole .pub file", "# blesend public key: share this line, fingerprint \(key.fingerprint)\n\(text)\n"),
        ("words after the key", "\(text)  alice@laptop\n"),
    ]
    for (what, pasted) in accepted {
        #expect(try PublicKey(pasted: Array(pasted.utf8)) == key, "\(what)")
        #expect(try KeyFile.resolvePublicKey(pasted) == key, "\(what), as an argument")
    }
    let damaged = String(text.dropLast()) + (text.last == "A" ? "B" : "A")
    let refused: [(String, String, KeyError.Code)] = [
        ("empty", "  \n", .badEncoding),
        ("not a key", "hello world", .badEncoding),
        ("cut short", String(text.dropLast(5)), .badEncoding),
        ("a typo", damaged, .badChecksum),
        ("two keys", "\(text)\n\(Identity.generate().publicKey.text)\n", .wrongKeyCount),
        ("a secret key", String(decoding: identity.secretTextBytes(), as: UTF8.self), .badEncoding),
        ("only comments", "# blesend public key\n# nothing else\n", .badEncoding),
    ]
    for (what, pasted, code) in refused {
        do {
            _ = try PublicKey(pasted: Array(pasted.utf8))
            Issue.record("\(what) was taken")
        } catch {
            #expect(error.code == code, "\(what): \(error)")
        }
    }
    do {
        _ = try PublicKey(pasted: identity.secretTextBytes())
    } catch {
        #expect(error.message.contains("secret key") && error.hint?.contains("never paste") == true)
    }
}

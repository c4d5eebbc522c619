#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Handshake
import Keys
import MemoryTransport
import Pipeline
import Session
import Simulation
import Sodium
import Storage
import Testing
import Transfer
@testable import BlesendCLI

/// One attack's world: a receiver whose store is a real `DirectoryFileStore` on a fresh folder
/// (`out`, inside a fresh `root`, so that paths outside the folder can be checked too), a sender
/// that the receiver trusts as "alice", and the real pipeline between them (libsodium, framing,
/// records, transfer).
final class Target {
    let root: String
    let out: String
    /// Opened on `out` as blerecv opens it (umask 022, the receiver's tag); again after a mount.
    private(set) var store: DirectoryFileStore
    let senderID = Identity.generate()
    let receiverID: Identity

    init(overwrite: Bool = false) throws {
        root = NSTemporaryDirectory() + "blesend-attack-\(UUID().uuidString)"
        out = root + "/out"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let receiverID = Identity.generate()
        self.receiverID = receiverID
        store = try Self.openStore(out, overwrite: overwrite, receiver: receiverID)
    }

    private static func openStore(_ out: String, overwrite: Bool, receiver: Identity) throws -> DirectoryFileStore {
        try DirectoryFileStore(directory: out, overwrite: overwrite, modes: FileModes(umask: 0o022),
                               temporaryTag: receiver.publicKey.fileTag)
    }

    private var mounts: [String] = []

    deinit {
        for path in mounts { Tmpfs.unmount(path) }
        try? FileManager.default.removeItem(atPath: root)
    }

    /// Puts the receiver's folder on a fresh tmpfs of `kilobytes`, unmounted when this goes away.
    func mountTmpfs(kilobytes: Int, readOnly: Bool = false) throws {
        try Tmpfs.mount(at: out, kilobytes: kilobytes, readOnly: readOnly)
        mounts.append(out)
        // The store holds the folder it opened, which the mount now hides: open the new one.
        store = try Self.openStore(out, overwrite: store.overwrite, receiver: receiverID)
    }

    var trust: TrustStore { TrustStore(peers: [.init(name: "alice", key: senderID.publicKey)]) }

    func receiver(trusting trusted: Bool = true, identity: Identity? = nil, store: (any FileStore)? = nil,
                  configuration: SessionConfiguration = .init(), maxFileSize: UInt64 = 1 << 40,
                  replayMemory: (any ReplayMemory)? = nil) -> ReceiverSession {
        ReceiverSession(identity: identity ?? receiverID, trust: trusted ? trust : TrustStore(peers: []),
                        store: store ?? self.store, configuration: configuration, maxFileSize: maxFileSize, replayMemory: replayMemory)
    }

    func sender(_ files: [any FileSource], pinned: PublicKey? = nil, configuration: SessionConfiguration = .init()) -> SenderSession {
        SenderSession(identity: senderID, receiverKey: pinned ?? receiverID.publicKey, files: files, configuration: configuration)
    }

    func scripted(opening: TransferMessage, _ script: [ScriptedSender.Step]) -> ScriptedSender {
        ScriptedSender(identity: senderID, receiverKey: receiverID.publicKey, opening: opening, script: script)
    }

    /// Every entry of the receiver's folder, hidden ones included, sorted.
    func entries() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: out)) ?? []).sorted()
    }

    /// Whether anything exists at `path` relative to the receiver's folder, as the C library sees
    /// the path (so a NUL ends it, as it would for any tool opening the file).
    func exists(_ relative: String) -> Bool {
        var status = stat()
        return lstat(out + "/" + relative, &status) == 0
    }

    func contents(_ name: String) -> [UInt8]? {
        FileManager.default.contents(atPath: out + "/" + name).map { Array($0) }
    }

    /// Whether the folder holds `name` with exactly `bytes` (a Bool, so a failure does not print the bytes).
    func holds(_ name: String, _ bytes: [UInt8]) -> Bool { contents(name) == bytes }
}

/// The last two checks of every row: nothing at the path the attack aimed at, and nothing in the
/// folder but `expected` (no temporary `.NAME.TAG-XXXXXX.blesend-part`, no other stray entry).
func expectNothingLeft(_ target: Target, at aimed: String?, besides expected: [String] = [],
                       sourceLocation: SourceLocation = #_sourceLocation) {
    if let aimed {
        #expect(!target.exists(aimed), "something exists at the aimed path \(aimed)", sourceLocation: sourceLocation)
    }
    let entries = target.entries()
    #expect(!entries.contains { $0.hasPrefix(".") && $0.hasSuffix(DirectoryFileStore.temporarySuffix) },
            "a temporary remains: \(entries)", sourceLocation: sourceLocation)
    #expect(entries == expected.sorted(), "folder holds \(entries), expected \(expected.sorted())", sourceLocation: sourceLocation)
}

/// The exit status the command-line tools give for an error, through their own mapping.
func exitStatus(_ error: SessionError) -> BlesendCLI.ExitStatus { CLIError(error).status }
func exitStatus(_ error: StorageError) -> BlesendCLI.ExitStatus { CLIError(error).status }
/// ... and for a file that failed, as the sender reports it, and as the receiver does.
func senderExitStatus(_ failure: FileFailure) -> BlesendCLI.ExitStatus { CLIError(failure, name: "f").status }
func receiverExitStatus(_ failure: FileFailure) -> BlesendCLI.ExitStatus { CLIError(receiving: failure, name: "f").status }

func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
    var random = SeededRandom(seed: seed)
    return (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
}

func blake2b(_ data: [UInt8]) -> [UInt8] {
    var hasher = BLAKE2b(outputLength: 32)
    hasher.update(data)
    return hasher.finalize()
}

func transferID(_ n: UInt64) -> TransferID { TransferID(halves: (0xA77A_C4, n)) }

extension ReceiverSession.Event {
    var refusal: SessionError.RefusalReason? {
        if case .refused(let reason) = self { return reason }
        return nil
    }
    var isAuthenticated: Bool {
        if case .authenticated = self { return true }
        return false
    }
    var fileFailure: FileFailure? {
        if case .transfer(.fileFailed(_, _, let failure)) = self { return failure }
        return nil
    }
    var savedAs: String? {
        if case .transfer(.fileSaved(_, _, let stored, _, _)) = self { return stored }
        return nil
    }
}

extension SenderSession.Event {
    var fileFailure: FileFailure? {
        if case .transfer(.fileFailed(_, let failure)) = self { return failure }
        return nil
    }
    var savedAs: String? {
        if case .transfer(.fileSaved(_, let stored, _, _, _)) = self { return stored }
        return nil
    }
}

/// A file that claims a size it does not have: an offer that lies, from an otherwise honest
/// sender (test code; the real `LocalFileSource` reports what `fstat` says).
final class LyingFileSource: FileSource {
    let name: String
    let size: UInt64?
    let bytes: [UInt8]

    init(name: String, claimedSize: UInt64, bytes: [UInt8]) {
        self.name = name
        self.size = claimedSize
        self.bytes = bytes
    }

    func read(at offset: UInt64, count: Int) throws -> [UInt8] {
        guard offset < UInt64(bytes.count) else { return [] }
        return Array(bytes[Int(offset)..<min(bytes.count, Int(offset) + count)])
    }
}

/// Small tmpfs mounts for single tests (needs CAP_SYS_ADMIN: root outside a restricted
/// container). Real `ENOSPC` and `EROFS` from the kernel, not a simulation of them. The folder
/// that owns a mount unmounts it before it removes itself.
enum Tmpfs {
    static let available: Bool = {
        let probe = NSTemporaryDirectory() + "blesend-mount-probe-\(UUID().uuidString)"
        guard mkdir(probe, 0o700) == 0 else { return false }
        defer { rmdir(probe) }
        guard Glibc.mount("tmpfs", probe, "tmpfs", 0, "size=16k") == 0 else { return false }
        umount2(probe, Int32(MNT_DETACH))
        return true
    }()

    /// Mounts a tmpfs of `kilobytes` at `path` (an existing, empty folder).
    static func mount(at path: String, kilobytes: Int, readOnly: Bool) throws {
        let flags: UInt = readOnly ? UInt(MS_RDONLY) : 0
        guard Glibc.mount("tmpfs", path, "tmpfs", flags, "size=\(kilobytes)k,mode=0755") == 0 else {
            throw StorageError(.io, "mount tmpfs at \(path): \(String(cString: strerror(errno)))")
        }
    }

    static func unmount(_ path: String) { umount2(path, Int32(MNT_DETACH)) }
}

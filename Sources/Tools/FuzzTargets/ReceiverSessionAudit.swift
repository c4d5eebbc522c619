import Framing
import Handshake
import MemoryTransport
import Simulation
import Pipeline
import Record
import Session
import Sodium
import Transfer

/// `receiver-session`: a whole `ReceiverSession` (link, handshake, records, transfer layer, file
/// store) driven by a peer, before and after authentication.
///
/// Input: a mode byte, then operations.
/// - mode 0: raw datagrams (one-byte length);
/// - mode 1: raw messages (two-byte length), framed by an honest link, so message 1 is exactly the
///   fuzzer's bytes;
/// - mode 2: a genuine message 1 from a sender the receiver does not trust, with a fuzzed payload;
/// - mode 3: a genuine message 1 from the trusted sender with a fuzzed payload (timestamp and opening
///   offer), then records the sender seals: `0` a transfer-message plaintext (bit 2: final record),
///   `1` a raw message, `2` time passes, `3` a raw datagram.
/// Bit 2 of the mode byte picks the datagram size (20 or 182 bytes). Bit 3 makes the receiver ask
/// about strangers (`blerecv --ask`, first contact, protocol.md §8.5): in mode 2, a stranger whose
/// message 1 asks for `firstContact` is then told `pending`, and the next input byte is its user's
/// answer (bit 0: yes, under `FixedKeys.approvedName`), followed by records as in mode 3.
///
/// Invariants:
/// - **no file is created from unauthenticated input**: the file store traps on `begin` unless the
///   first message of the connection is a genuine message 1 from the trusted sender (byte for byte
///   what that sender writes; a shadow link reassembles the same datagrams to tell), or the
///   receiver's user accepted a stranger, and then only for that sender's name; no `authenticated`
///   or transfer event comes without it, and no question about a sender from a receiver that does
///   not ask;
/// - bounded memory: a file never holds more than its offer announced nor more than `maxFileSize`;
///   at most one temporary file per connection, at most 4 folders being built (extension
///   `folders`: the store takes folders too); the link's reorder buffer stays under its window;
/// - a committed file's content hashes to the hash the sender sent in `done`;
/// - after `shutdown` no temporary file and no folder being built is left.
// The receiver-session target's file store, which audits every call (ReceiverSessionTarget.swift).

/// A file store that audits every call: it traps on a `begin` the harness did not allow, and
/// checks the size bounds on every write.
final class AuditingFileStore: FileStore {
    /// Set by the harness once the connection's first message is a genuine message 1 from the
    /// trusted sender.
    var allowedSender: String?
    fileprivate(set) var begun = 0
    fileprivate(set) var open = 0
    fileprivate(set) var committed: [[UInt8]] = []
    /// Folders begun and neither committed nor discarded.
    fileprivate(set) var openTrees = 0

    func begin(name: String, size: UInt64?, sender: String) throws -> any IncomingFile {
        require(allowedSender != nil, "a file (\(name)) was created before a trusted sender authenticated")
        require(sender == allowedSender, "a file was created for \(sender), not the authenticated sender")
        begun += 1
        open += 1
        return AuditedFile(store: self, size: size)
    }

    fileprivate func closed(_ file: AuditedFile, committing: Bool) {
        open -= 1
        if committing { committed.append(file.bytes) }
    }
}

extension AuditingFileStore: TreeStore {
    func beginTree(named topName: String, origin: TreeOrigin) throws -> any IncomingTree {
        require(allowedSender != nil, "a folder (\(topName)) was begun before a trusted sender authenticated")
        openTrees += 1
        return AuditedTree(store: self)
    }
}

/// A folder being built: its files are audited like any file.
final class AuditedTree: IncomingTree {
    let store: AuditingFileStore
    var isOpen = true

    init(store: AuditingFileStore) { self.store = store }

    func makeFolder(_ components: [String], id: TransferID) throws {
        require(isOpen, "a folder made in a closed tree")
        require(!components.isEmpty && components.allSatisfy { !$0.isEmpty && $0 != "." && $0 != ".." && !$0.contains("/") },
                "unsafe folder path \(components)")
    }

    func beginFile(_ components: [String], id: TransferID, size: UInt64?, executable: Bool) throws -> any IncomingFile {
        require(isOpen, "a file begun in a closed tree")
        require(!components.isEmpty && components.allSatisfy { !$0.isEmpty && $0 != "." && $0 != ".." && !$0.contains("/") },
                "unsafe file path \(components)")
        store.begun += 1
        store.open += 1
        return AuditedFile(store: store, size: size)
    }

    func commit() throws -> String {
        require(isOpen, "commit of a closed tree")
        isOpen = false
        store.openTrees -= 1
        return "tree"
    }

    func discard() {
        guard isOpen else { return }
        isOpen = false
        store.openTrees -= 1
    }
}

final class AuditedFile: IncomingFile {
    let store: AuditingFileStore
    let size: UInt64?
    var bytes: [UInt8] = []
    var isOpen = true

    init(store: AuditingFileStore, size: UInt64?) {
        self.store = store
        self.size = size
    }

    func write(_ data: [UInt8], at offset: UInt64) throws {
        require(isOpen, "write after commit or discard")
        require(offset == UInt64(bytes.count), "write at \(offset), file has \(bytes.count) bytes")
        bytes += data
        if let size { require(UInt64(bytes.count) <= size, "file grew past its offered size \(size)") }
        require(UInt64(bytes.count) <= receiverSessionMaxFileSize, "file grew past maxFileSize")
    }

    func commit() throws -> String {
        require(isOpen, "commit of a closed file")
        isOpen = false
        store.closed(self, committing: true)
        return "stored"
    }

    func discard() {
        guard isOpen else { return }
        isOpen = false
        store.closed(self, committing: false)
    }
}

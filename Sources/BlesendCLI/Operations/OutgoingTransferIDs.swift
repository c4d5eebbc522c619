#if canImport(Glibc)
import Glibc
#endif
import Keys
import Session
import Sodium
import Durable
import Storage
import Transfer

/// The transfer ids of files and folders blesend began sending and has not seen saved, one small
/// file each in `outgoing/` of the state folder, so that a run again with the same file or folder
/// for the same receiver offers it under the same id and the receiver resumes what it holds
/// (docs/protocol.md §5, §8.4).
///
/// A file is known by its `stamp` (device, inode, size, modification time) and the receiver's
/// key: a file written in between gets a fresh id, and so does any file once it was saved
/// (`forget`), so sending it again stores it again. A folder is known by its device and inode:
/// its tree id is kept until the folder is in place (`forgetTree`), and each of its files goes
/// under an id made from the tree id, its path and its stamp (`fileID`: a file changed in between
/// gets another). The receiver checks the bytes it holds against the whole-file hash in
/// `done`, so a stale id never commits a wrong file. Losing this folder costs a resume, nothing
/// else: failures here are reported and the id is a fresh one.
final class OutgoingTransferIDs {
    /// `outgoing/` of the state folder: one entry a file, a one-record `Journal` (magic
    /// `BSOUTID1`, the 16-byte id) written whole.
    private let disk: PosixDisk
    static let magic = Array("BSOUTID1".utf8)
    let receiver: PublicKey
    /// Entries older than this are removed when the folder is opened (sends given up long ago).
    static let lifetime: UInt64 = 30 * 24 * 3600

    var folder: String { disk.folder }

    init?(stateFolder: String, receiver: PublicKey) {
        guard let disk = try? PosixDisk(folder: stateFolder + "/outgoing") else { return nil }
        self.disk = disk
        self.receiver = receiver
        removeOld()
    }

    /// The entries of the trees given out this run, by tree id (`forgetTree`).
    private var treeEntries: [TransferID: String] = [:]

    /// Sets each file's transfer id: the one kept for it, or a fresh one kept from now on.
    func assign(_ sources: [LocalFileSource]) -> [String] {
        var problems: [String] = []
        for source in sources {
            let (id, _, problem) = keptID(entryName(source.stamp))
            source.transferID = id
            if let problem { problems.append("cannot keep the transfer id of \(source.name): \(problem)") }
        }
        return problems
    }

    /// The receiver saved `source`: a later send of it is a new transfer.
    func forget(_ source: LocalFileSource) {
        disk.remove(entryName(source.stamp))
    }

    /// The tree id to send the folder at `path` under (`kept`: an earlier run began sending it
    /// under that id), or nil when `path` cannot be looked at; a problem keeping it is reported.
    func treeID(for path: String) -> (id: TransferID, kept: Bool, problem: String?)? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        var stamp = Array("folder".utf8)
        stamp.appendBigEndian(UInt64(status.st_dev))
        stamp.appendBigEndian(UInt64(status.st_ino))
        let name = entryName(stamp)
        let kept = keptID(name)
        treeEntries[kept.id] = name
        return kept
    }

    /// The folder sent under `tree` is in place: a later send of it is a new transfer.
    func forgetTree(_ tree: TransferID) {
        if let name = treeEntries.removeValue(forKey: tree) { disk.remove(name) }
    }

    /// The transfer id of a folder's file: from the tree id, the file's path as it travels and its
    /// stamp, so a run again under the same tree id offers an unchanged file under the same id.
    static func fileID(tree: TransferID, entry: LocalTreeEntry) -> TransferID {
        var hash = BLAKE2b(outputLength: TransferConstants.idLength)
        hash.update(tree.bytes)
        hash.update(entry.wirePath)
        hash.update(entry.stamp)
        return TransferID(bytes: hash.finalize()) ?? randomTransferID()
    }

    /// The id kept under `name`, or a fresh one kept there from now on (with the problem, if it
    /// could not be kept).
    private func keptID(_ name: String) -> (id: TransferID, kept: Bool, problem: String?) {
        var kept: TransferID?
        if disk.exists(name) {
            _ = try? Journal.scan(disk: disk, name: name, magic: Self.magic) { body in
                kept = kept == nil ? TransferID(bytes: body[...]) : nil   // one record, no more
                return kept != nil
            }
            disk.closeFile(name)
        }
        if let kept { return (kept, true, nil) }
        let id = randomTransferID()
        do {
            _ = try Journal.write(disk: disk, name: name, magic: Self.magic, records: [id.bytes])
            disk.closeFile(name)
            return (id, false, nil)
        } catch {
            return (id, false, error.description)
        }
    }

    private func entryName(_ stamp: [UInt8]) -> String {
        var hash = BLAKE2b(outputLength: 16)
        hash.update(receiver.bytes)
        hash.update(stamp)
        return hash.finalize().map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    private func removeOld() {
        let now = disk.secondsSinceEpoch()
        for name in disk.names() {
            if let modified = disk.modificationTime(name), now > modified, now - modified > Self.lifetime { disk.remove(name) }
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif
import Keys
import Session
import Sodium
import State
import Storage
import Transfer

/// The transfer ids of files blesend began sending and has not seen saved, one small file each in
/// `outgoing/` of the state folder, so that a run again with the same file for the same receiver
/// offers it under the same id and the receiver resumes its partial (docs/protocol.md §5).
///
/// A file is known by its `stamp` (device, inode, size, modification time) and the receiver's
/// key: a file written in between gets a fresh id, and so does any file once it was saved
/// (`forget`), so sending it again stores it again. The receiver checks the bytes it holds
/// against the whole-file hash in `done`, so a stale id never commits a wrong file. Losing this
/// folder costs a resume, nothing else: failures here are reported and the id is a fresh one.
struct OutgoingTransferIDs {
    /// `outgoing/` of the state folder: one entry a file, written whole (`JournalDisk.replace`).
    private let disk: PosixJournalDisk
    let receiver: PublicKey
    /// Entries older than this are removed when the folder is opened (sends given up long ago).
    static let lifetime: Int = 30 * 24 * 3600

    var folder: String { disk.folder }

    init?(stateFolder: String, receiver: PublicKey) {
        guard let disk = try? PosixJournalDisk(folder: stateFolder + "/outgoing") else { return nil }
        self.disk = disk
        self.receiver = receiver
        removeOld()
    }

    /// Sets each file's transfer id: the one kept for it, or a fresh one kept from now on.
    func assign(_ sources: [LocalFileSource]) -> [String] {
        var problems: [String] = []
        for source in sources {
            let name = entryName(source)
            if let bytes = try? disk.read(name), bytes.count == TransferConstants.idLength, let kept = TransferID(bytes: bytes) {
                source.transferID = kept
                continue
            }
            let id = randomTransferID()
            source.transferID = id
            do {
                try disk.replace(name, with: id.bytes)
            } catch {
                problems.append("cannot keep the transfer id of \(source.name): \(error)")
            }
        }
        return problems
    }

    /// The receiver saved `source`: a later send of it is a new transfer.
    func forget(_ source: LocalFileSource) {
        unlink(folder + "/" + entryName(source))
    }

    private func entryName(_ source: LocalFileSource) -> String {
        var hash = BLAKE2b(outputLength: 16)
        hash.update(receiver.bytes)
        hash.update(source.stamp)
        return hash.finalize().map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    private func removeOld() {
        guard let directory = opendir(folder) else { return }
        defer { closedir(directory) }
        let now = time(nil)
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard !name.hasPrefix(".") else { continue }
            var status = stat()
            let path = folder + "/" + name
            if lstat(path, &status) == 0, now - status.st_mtim.tv_sec > Self.lifetime { unlink(path) }
        }
    }
}

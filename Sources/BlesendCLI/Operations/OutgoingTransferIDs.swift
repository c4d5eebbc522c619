#if canImport(Glibc)
import Glibc
#endif
import Keys
import Session
import Sodium
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
    let folder: String
    let receiver: PublicKey
    /// Entries older than this are removed when the folder is opened (sends given up long ago).
    static let lifetime: Int = 30 * 24 * 3600

    init?(stateFolder: String, receiver: PublicKey) {
        folder = stateFolder + "/outgoing"
        self.receiver = receiver
        for path in [stateFolder, folder] where mkdir(path, 0o700) != 0 && errno != EEXIST { return nil }
        removeOld()
    }

    /// Sets each file's transfer id: the one kept for it, or a fresh one kept from now on.
    func assign(_ sources: [LocalFileSource]) -> [String] {
        var problems: [String] = []
        for source in sources {
            let path = entryPath(source)
            if let kept = readEntry(path) {
                source.transferID = kept
                continue
            }
            let id = randomTransferID()
            source.transferID = id
            if !writeEntry(path, id) { problems.append("cannot keep the transfer id of \(source.name) in \(folder): \(String(cString: strerror(errno)))") }
        }
        return problems
    }

    /// The receiver saved `source`: a later send of it is a new transfer.
    func forget(_ source: LocalFileSource) {
        unlink(entryPath(source))
    }

    private func entryPath(_ source: LocalFileSource) -> String {
        var hash = BLAKE2b(outputLength: 16)
        hash.update(receiver.bytes)
        hash.update(source.stamp)
        return folder + "/" + hash.finalize().map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    private func readEntry(_ path: String) -> TransferID? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: TransferConstants.idLength + 1)
        let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        return n == TransferConstants.idLength ? TransferID(bytes: bytes.prefix(n)) : nil
    }

    /// Writes the entry under a new name, syncs it, renames it into place and syncs the folder:
    /// never half an id, and a power cut after the first bytes went keeps it.
    private func writeEntry(_ path: String, _ id: TransferID) -> Bool {
        let temporary = path + ".new"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return false }
        let written = id.bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd) == 0
        close(fd)
        guard written == id.bytes.count, synced, rename(temporary, path) == 0 else {
            unlink(temporary)
            return false
        }
        let folderFD = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folderFD >= 0 {
            fsync(folderFD)
            close(folderFD)
        }
        return true
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

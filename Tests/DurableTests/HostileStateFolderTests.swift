#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Handshake
import Pipeline
import Testing
@testable import Durable

private func scratch() throws -> String {
    var template = Array("/tmp/blesend-hostile-XXXXXX".utf8CString)
    return String(cString: try #require(mkdtemp(&template)))
}

/// Issue 32: the state folder was trusted without checks. Now it is checked as an output folder
/// is, and each file in it is opened as a regular file of ours without following a symlink or
/// blocking: a FIFO, a symlink, a folder others may write, and an oversized journal are each
/// refused or replaced with a clear error, never a hang, a crash or a read of someone else's file.
@Test func aHostileStateFolderIsRefusedOrReplacedNeverFollowed() throws {
    let base = try scratch()
    defer { try? FileManager.default.removeItem(atPath: base) }

    // A folder others may write (and that is not ours to decide: mode 0777 without the sticky bit).
    let open = base + "/open"
    #expect(mkdir(open, 0o700) == 0 && chmod(open, 0o777) == 0)
    #expect(throws: StorageError.self) { try PosixDisk(folder: open) }
    // A symlink in place of the folder.
    let real = base + "/real"
    #expect(mkdir(real, 0o700) == 0 && symlink(real, base + "/link") == 0)
    #expect(throws: StorageError.self) { try PosixDisk(folder: base + "/link") }

    let folder = base + "/state"
    let disk = try PosixDisk(folder: folder)
    // A FIFO where the journal goes: refused at once (O_NONBLOCK, not a regular file), not a hang.
    #expect(mkfifo(folder + "/replay-fifo", 0o600) == 0)
    #expect(throws: StorageError.self) { try ReplayJournal(disk: disk, name: "replay-fifo") }
    // A symlink to a file of someone else's: not followed.
    #expect(FileManager.default.createFile(atPath: base + "/elsewhere", contents: Data(ReplayJournal.magic)))
    #expect(symlink(base + "/elsewhere", folder + "/replay-link") == 0)
    #expect(throws: StorageError.self) { try ReplayJournal(disk: disk, name: "replay-link") }
    // An oversized journal: replaced unread (and said so), not read into memory.
    let oversized = folder + "/replay-big"
    #expect(FileManager.default.createFile(atPath: oversized, contents: Data(ReplayJournal.magic)))
    #expect(truncate(oversized, 1 << 30) == 0)
    let replaced = try ReplayJournal(disk: disk, name: "replay-big")
    #expect(replaced.replacedUnreadable && replaced.recalled.isEmpty)
    var status = stat()
    #expect(stat(oversized, &status) == 0 && status.st_size == off_t(ReplayJournal.magic.count))
    let history = folder + "/history-big"
    #expect(FileManager.default.createFile(atPath: history, contents: Data(HistoryJournal.magic)))
    #expect(truncate(history, 1 << 30) == 0)
    #expect(try HistoryJournal(disk: disk, name: "history-big").entries().isEmpty)
}

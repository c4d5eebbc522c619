import Foundation
@testable import BlesendCLI
@testable import Durable
import Keys
@testable import Storage
import Testing
import TestSupport
import Transfer

/// Runs a built tool with `arguments`, its output thrown away: its exit status and its peak
/// resident memory in KiB, as GNU time (`/usr/bin/time`, scripts/setup.sh installs it) measures it
/// from a process of its own. This process's own `wait4` would not do: `posix_spawn` starts the
/// child on this process's memory (vfork), and the kernel counts that memory's peak into the
/// child's `ru_maxrss` at its exec, so with tests running in parallel the test runner's peak was
/// reported as the tool's.
private func peakMemory(_ tool: String, _ arguments: [String]) throws -> (status: Int32, maxRSSKiB: Int) {
    let time = "/usr/bin/time"
    try #require(FileManager.default.isExecutableFile(atPath: time), "no \(time): install GNU time (scripts/setup.sh does)")
    let report = FileManager.default.temporaryDirectory.appendingPathComponent("blesend-peak-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: report) }
    let path = CommandRun.productsDirectory.appendingPathComponent(tool).path
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    let argv = ([time, "-f", "%M", "-o", report, path] + arguments).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var pid = pid_t()
    let spawned = posix_spawn(&pid, time, &actions, nil, argv, environ)
    try #require(spawned == 0, "posix_spawn: \(spawned)")
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    let written = try String(contentsOfFile: report, encoding: .utf8)
    // GNU time writes "Command exited with non-zero status N" first when the tool failed.
    let kib = try #require(written.split(separator: "\n").last.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }, "\(time) wrote: \(written)")
    return ((status >> 8) & 0xFF, kib)
}

/// Issue 32: a 300 MiB folder journal (a checkpoint every 256 KiB, never compacted, or planted)
/// was read whole by every start and by `blerecv partials`, `--remove` included. Now a journal
/// over `TreeJournal.maxBytes` is not read: `partials` lists and removes it in under 64 MiB.
@Test func aThreeHundredMebibyteJournalIsClearedInUnderSixtyFourMebibytes() throws {
    let fixture = try Fixture()
    defer { fixture.remove() }
    let d = fixture.dir
    let me = try KeyFile.loadIdentity(path: "\(d)/me")
    let out = d + "/out"
    try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)
    let store = try DirectoryFileStore(directory: out, modes: FileModes(umask: 0o022), temporaryTag: me.publicKey.fileTag,
                                       keepPartials: .seconds(3_600))
    let tree = try store.beginTree(topName: "photos", origin: TreeOrigin(senderKey: [UInt8](repeating: 3, count: 32), tree: TransferID(halves: (3, 1)),
                                                                         folder: TransferID(halves: (3, 2)), top: Array("photos".utf8)))
    tree.closeForResume()
    let journal = try #require(try FileManager.default.contentsOfDirectory(atPath: out).first { $0.hasSuffix(TemporaryNames.recordSuffix) })
    // Valid frames: a checkpoint of one file, again and again, to 300 MiB.
    let frame = RecordFrame.frame(TreeJournal.encode(.checkpoint(id: TransferID(halves: (3, 4)), path: ["b.bin"], size: nil, executable: false,
                                                                 durable: 0, prefixHash: [UInt8](repeating: 0, count: 32)),
                                                     savedAt: UInt64(Date().timeIntervalSince1970)))
    let mebibyte = Data(Array(repeating: frame, count: (1 << 20) / frame.count).flatMap { $0 })
    let handle = try #require(FileHandle(forWritingAtPath: out + "/" + journal))
    handle.seekToEndOfFile()
    for _ in 0..<300 { handle.write(mebibyte) }
    try handle.close()

    let listed = try peakMemory("blerecv", ["partials", "--key", "\(d)/me", "--out", out])
    #expect(listed.status == 0 && listed.maxRSSKiB < 64 << 10, "partials: exit \(listed.status), \(listed.maxRSSKiB) KiB")
    let removed = try peakMemory("blerecv", ["partials", "--key", "\(d)/me", "--out", out, "--remove"])
    #expect(removed.status == 0 && removed.maxRSSKiB < 64 << 10, "partials --remove: exit \(removed.status), \(removed.maxRSSKiB) KiB")
    #expect(try FileManager.default.contentsOfDirectory(atPath: out).isEmpty)
}

#if canImport(Glibc)
import Glibc
#endif
import MemoryTransport
import Pipeline
import Session
import Simulation
import TestDoubles
import Transfer

/// Peak memory while 1 GiB flows through the whole pipeline in memory:
/// PatternFileSource → sender → link → receiver → MemoryFileStore(keepsBytes: false).
///
/// Each mode runs in a fresh child process (this binary re-executed), so that its `VmHWM` is its own
/// and not the high-water mark of an earlier benchmark in the same process.
enum MemoryBench {
    static let fileSize: UInt64 = 1 << 30
    static let goalPerSide = 32 << 20
    static let mtu = 247

    enum Mode: String, CaseIterable {
        /// LoopbackRun: both endpoints plus the simulated link (10 ms one way, datagrams in flight).
        case loopback
        /// Direct hand-off: both endpoints back to back, nothing buffered between them.
        case bytes
        /// LoopbackRun with a folder of `folderFiles` files of 1 KiB (pipelined, extension
        /// `folders`) before the file.
        case folder
    }

    static let folderFiles = 10_000

    /// Parent: runs every mode in a child process, returns whether all passed.
    static func run(size: UInt64 = fileSize) -> Bool {
        print("== memory: \(size >> 20) MiB through the full pipeline in memory, MTU \(mtu), peak RSS = VmHWM")
        flushOutput()
        var allPass = true
        for mode in Mode.allCases {
            let status = spawnSelf(arguments: ["memory-child", mode.rawValue, "\(size)"])
            if status != 0 {
                print("memory \(mode.rawValue): child process failed (status \(status))  FAIL")
                allPass = false
            }
            flushOutput()
        }
        return allPass
    }

    /// Child: one mode, one fresh process. Exit status 0 when the goal is met.
    static func child(mode: Mode, size: UInt64) -> Int32 {
        let baselineRSS = procStatusBytes("VmRSS") ?? 0
        let baselineHWM = procStatusBytes("VmHWM") ?? 0
        let source = ProgressFileSource(PatternFileSource(name: "memory.bin", size: size),
                                        every: 128 << 20, label: "memory \(mode.rawValue)")
        let store = MemoryFileStore(keepsBytes: false)
        var items: [OutgoingItem] = [.file(source)]
        if mode == .folder {
            let tree = TransferID(bytes: Array(repeating: 0x7E, count: 16))!
            items = [.folder(tree: tree, path: Array("many".utf8))]
                + (0..<folderFiles).map { i in
                    .treeFile(tree: tree, path: Array("many/f\(i)".utf8), executable: false,
                              source: PatternFileSource(name: "many/f\(i)", size: 1024))
                }
                + [.commit(tree: tree, name: "many"), .file(source)]
        }
        var (sender, receiver) = makeEndpoints(items: items, store: store)
        let datagramSize = writeDatagramSize(mtu: mtu)
        let clock = ContinuousClock()
        let start = clock.now
        var finished = false
        var detail = ""
        switch mode {
        case .loopback, .folder:
            var options = LoopbackRun.Options(maxDatagramSize: datagramSize)
            options.recordProgress = false
            let outcome = LoopbackRun.run(sender: &sender, receiver: &receiver, options: options)
            finished = outcome.finished
            detail = "virtual time \(fixed(seconds(outcome.virtualTime), 1)) s, connections \(outcome.connections), "
                + "events kept \(outcome.senderEvents.count + outcome.receiverEvents.count)"
            if !outcome.senderErrors.isEmpty || !outcome.receiverErrors.isEmpty {
                detail += ", errors \(outcome.senderErrors) \(outcome.receiverErrors)"
            }
        case .bytes:
            do {
                let result = try runHandOff(sender: &sender, receiver: &receiver, datagramSize: datagramSize)
                finished = result.finished && result.savedFiles == 1
                detail = "virtual time \(fixed(seconds(result.virtualTime), 1)) s"
            } catch {
                detail = "failed: \(error)"
            }
        }
        let wall = clock.now - start
        let peak = procStatusBytes("VmHWM") ?? 0
        let filesExpected = mode == .folder ? folderFiles + 1 : 1
        let intact = finished && store.committed["memory.bin"] != nil && store.committed.count == filesExpected
            && store.patternMismatches == 0
        let label = switch mode {
        case .loopback: "both sides together + simulated link (LoopbackRun)"
        case .bytes: "bytes path only: both sides back to back, no link buffer"
        case .folder: "a folder of \(folderFiles) files of 1 KiB, then the file, both sides + simulated link (LoopbackRun)"
        }
        print("memory \(mode.rawValue) — \(label):")
        print("   baseline before the run: VmRSS \(mib(baselineRSS)), VmHWM \(mib(baselineHWM))")
        print("   peak RSS (VmHWM) after \(size >> 20) MiB: \(mib(peak))  (growth over baseline \(mib(peak - baselineRSS)))")
        print("   committed: \(store.committed["memory.bin"] != nil), patternMismatches: \(store.patternMismatches), "
              + "wall \(fixed(seconds(wall), 1)) s (\(fixed(Double(size) / 1_048_576 / seconds(wall), 1)) MiB/s), \(detail)")
        // Both sides share this process, so the whole process under the per-side goal proves each side is.
        let pass = intact && peak < goalPerSide
        print("   goal: < \(goalPerSide >> 20) MiB per side — whole process (both sides together) \(mib(peak)) < 32 MiB  "
              + verdict(pass) + (intact ? "" : "  [file not delivered intact]"))
        flushOutput()
        return pass ? 0 : 1
    }

    /// Runs this executable again with `arguments`; returns its exit status.
    private static func spawnSelf(arguments: [String]) -> Int32 {
        var exe = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &exe, exe.count - 1)
        guard n > 0 else { return -1 }
        let path = String(decoding: exe[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, path, nil, nil, argv, environ)
        guard spawned == 0 else { return -1 }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        // WIFEXITED / WEXITSTATUS
        return (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    }
}

import Sodium
import Zstd

/// Chunk compression before encryption (issue 13): what `HistoryCompressor` would save on the air
/// and what it costs in CPU, per zstd level, on text and on random bytes.
///
/// The file goes in chunks of `ChunkFrameLimits.maxChunk` bytes; each becomes a frame that
/// references the file's last 64 KiB, sent only when it is at most 99 % of the chunk, else the
/// chunk goes raw. On the air each chunk costs its frame or its bytes plus a message header.
enum CompressBench {
    static let chunkSize = ChunkFrameLimits.maxChunk
    /// Bytes a `zdata`/`data` message adds to each chunk (type and length), as modelled here.
    static let messageHeader = 3
    /// 10 → 11 is where zstd changes strategy (lazy2 → btlazy2) and gets several times slower.
    static let levels: [Int32] = [1, 3, 6, 9, 10, 11, 12, 19]
    static let randomSize = 8 << 20
    /// The link carries at most ~180 kB/s: a level is affordable if one core compresses far faster.
    static let affordableMBps = 2.0
    /// Random bytes must cost at most this much more on the air than the file's own size.
    static let randomOverheadGoal = 0.01
    /// Each timed pass repeats until it has used this much CPU, so fast levels are measured too.
    static let minimumCPUSeconds = 0.3

    struct Figures {
        var original = 0
        var onAir = 0
        var compressedChunks = 0
        var chunks = 0
        var compressMBps = 0.0
        var decompressMBps = 0.0
        var ratio: Double { Double(original) / Double(max(onAir, 1)) }
    }

    static func run(path: String?) -> Bool {
        let roots = path.map { [$0] } ?? defaultCorpus()
        var text: [UInt8] = [], files = 0
        for root in roots {
            guard let read = FileTree.concatenatedFiles(under: root) else {
                note("compress: cannot read \(root)")
                return false
            }
            text += read.bytes
            files += read.files
        }
        let random = Random.bytes(randomSize)
        print("== compress: zstd \(LibZstd.version), \(chunkSize)-byte chunks, each one frame against the file's last "
              + "\(ChunkFrameLimits.historyLimit >> 10) KiB, sent when ≤ \(ChunkFrameLimits.maxFramePercent) % of the chunk")
        print("   ratio = original / on air, on air = frame or raw chunk + \(messageHeader) B header per chunk; \"no hist.\" = the same without history")
        print("   MB/s = 10^6 original bytes per CPU second (getrusage), one core; random chunks go raw, so their decompress is a copy")
        print("   text: \(roots.joined(separator: " + ")), \(files) files, \(mib(text.count)); random: \(mib(random.count))")
        print(padded("corpus", 8) + leftPadded("level", 6) + leftPadded("ratio", 8) + leftPadded("no hist.", 10)
              + leftPadded("compressed", 12) + leftPadded("compress", 13) + leftPadded("decompress", 15) + "  goal")
        var allPass = true
        for level in levels {
            let withHistory = measure(text, level: level, historyLimit: ChunkFrameLimits.historyLimit)
            let alone = measure(text, level: level, historyLimit: 0, timed: false)
            var goal = ""
            if level == HistoryCompressor.defaultLevel {
                let affordable = withHistory.compressMBps >= affordableMBps
                allPass = allPass && affordable
                goal = "  default level: compress ≥ \(fixed(affordableMBps, 0)) MB/s \(verdict(affordable))"
            }
            print(row("text", level, withHistory, alone) + goal)
            flushOutput()
        }
        for level in levels {
            let figures = measure(random, level: level, historyLimit: ChunkFrameLimits.historyLimit)
            let alone = measure(random, level: level, historyLimit: 0, timed: false)
            let overhead = Double(figures.onAir - figures.original) / Double(figures.original)
            let pass = overhead <= randomOverheadGoal
            allPass = allPass && pass
            print(row("random", level, figures, alone)
                  + "  overhead +\(fixed(overhead * 100, 3)) % ≤ \(fixed(randomOverheadGoal * 100, 0)) % \(verdict(pass))")
            flushOutput()
        }
        return allPass
    }

    /// The repository's `Sources` and `docs`, found from this file's place in it.
    static func defaultCorpus() -> [String] {
        [repositoryRoot + "/Sources", repositoryRoot + "/docs"]
    }

    /// The checkout this file was built from.
    static var repositoryRoot: String {
        var components = String(#filePath).split(separator: "/", omittingEmptySubsequences: false)
        components.removeLast(4)   // Sources/Tools/blesend-bench/CompressBench.swift
        return components.joined(separator: "/")
    }

    /// Sends `bytes` through a compressor and a decompressor chunk by chunk, as the transfer layer
    /// will, checks that every byte arrives, and times each side in CPU seconds.
    static func measure(_ bytes: [UInt8], level: Int32, historyLimit: Int, timed: Bool = true) -> Figures {
        let chunks = stride(from: 0, to: bytes.count, by: chunkSize).map { Array(bytes[$0..<min($0 + chunkSize, bytes.count)]) }
        var figures = Figures(original: bytes.count, chunks: chunks.count)
        var frames: [[UInt8]?] = []
        let compressCPU = repeatedCPU(once: !timed) {
            let compressor = HistoryCompressor(level: level, historyLimit: historyLimit)
            frames = chunks.map { compressor.compress($0) }
        }
        for (chunk, frame) in zip(chunks, frames) {
            figures.onAir += (frame?.count ?? chunk.count) + messageHeader
            if frame != nil { figures.compressedChunks += 1 }
        }
        guard timed else { return figures }
        var received: [UInt8] = []
        let decompressCPU = repeatedCPU {
            let decompressor = HistoryDecompressor(historyLimit: historyLimit)
            received.removeAll(keepingCapacity: true)
            for (chunk, frame) in zip(chunks, frames) {
                if let frame {
                    guard let output = try? decompressor.decompress(frame, expectedSize: chunk.count) else {
                        fatalError("level \(level): a frame did not decompress")
                    }
                    received += output
                } else {
                    decompressor.appendRaw(chunk)
                    received += chunk
                }
            }
        }
        precondition(received == bytes, "level \(level): the round trip changed the bytes")
        figures.compressMBps = Double(bytes.count) / 1e6 / compressCPU
        figures.decompressMBps = Double(bytes.count) / 1e6 / decompressCPU
        return figures
    }

    /// CPU seconds per run of `body`, running it until `minimumCPUSeconds` have passed (or once).
    static func repeatedCPU(once: Bool = false, _ body: () -> Void) -> Double {
        var runs = 0
        let start = RunnerBench.cpuSeconds()
        repeat {
            body()
            runs += 1
        } while !once && RunnerBench.cpuSeconds() - start < minimumCPUSeconds
        return (RunnerBench.cpuSeconds() - start) / Double(runs)
    }

    static func row(_ corpus: String, _ level: Int32, _ figures: Figures, _ alone: Figures) -> String {
        padded(corpus, 8) + leftPadded("\(level)", 6) + leftPadded(fixed(figures.ratio, 3), 8)
            + leftPadded(fixed(alone.ratio, 3), 10) + leftPadded("\(figures.compressedChunks)/\(figures.chunks)", 12)
            + leftPadded(fixed(figures.compressMBps, 1) + " MB/s", 13) + leftPadded(fixed(figures.decompressMBps, 1) + " MB/s", 15)
    }
}

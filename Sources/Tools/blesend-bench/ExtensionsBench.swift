import Keys
import MemoryTransport
import Pipeline
import Session
import Simulation
import TestDoubles
import Transfer

/// What the transfer extensions (docs/protocol.md §8) buy on a link of fixed bandwidth: the modelled
/// air (`RadioModel`: LE 1M, 15 ms connection interval, 6 packets of 251 bytes per event each way,
/// GATT with MTU 247: about 100 kB/s), whole sessions through `LoopbackRun`, each variant beside
/// its baseline in the same run. Effective goodput = original file bytes ÷ virtual time, handshake
/// to goodbye. Goals (issue 13): text ≥ 2.5 × the link's raw byte rate; 1,000 files of 1 KiB
/// within 1.3 × the time of one file of the same total size; random bytes ≥ 0.99 × without
/// compression. Returns whether every goal holds.
enum ExtensionsBench {
    static let model = RadioModel(phy: .le1M, dataLength: 251, connectionInterval: .milliseconds(15), maxPacketsPerEvent: 6,
                                  transport: .gatt, sendQueue: .typical)
    static let datagramSize = 244   // MTU 247

    struct Run {
        var seconds: Double
        var airBytes: UInt64
        var intact: Bool
    }

    static func run(corpus: [String]) -> Bool {
        var text: [UInt8] = [], textFiles = 0
        for path in corpus {
            guard let read = FileTree.concatenatedFiles(under: path) else { print("cannot read \(path)"); return false }
            text += read.bytes
            textFiles += read.files
        }
        let rawRate = Double(datagramSize) / seconds(RadioScheduler<Int>.streamTime(model: model, datagramSize: datagramSize, count: 1000)) * 1000
        print("== extensions: LoopbackRun over \(model) (datagram \(datagramSize) B); raw link rate \(fixed(rawRate / 1000, 1)) kB/s")
        print(padded("workload", 34) + padded("variant", 26) + leftPadded("seconds", 9) + leftPadded("kB/s", 9)
              + leftPadded("on air", 11) + leftPadded("ratio", 8) + "  goal")
        var pass = true
        func line(_ workload: String, _ variant: String, _ bytes: Int, _ run: Run, ratio: Double? = nil, goal: String = "") {
            let rate = Double(bytes) / run.seconds
            print(padded(workload, 34) + padded(variant, 26) + leftPadded(fixed(run.seconds, 2), 9) + leftPadded(fixed(rate / 1000, 1), 9)
                  + leftPadded("\(run.airBytes)", 11) + leftPadded(ratio.map { fixed($0, 3) } ?? "", 8) + "  " + goal
                  + (run.intact ? "" : " [not intact]"))
            flushOutput()
            if !run.intact { pass = false }
        }

        // Text: compressed against the link's raw rate.
        let textName = "text (\(textFiles) files, \(fixed(Double(text.count) / 1_048_576, 1)) MiB)"
        let plainText = measure([("text", text)], compresses: false)
        line(textName, "not compressed", text.count, plainText)
        let zText = measure([("text", text)], compresses: true)
        let textRatio = Double(text.count) / zText.seconds / rawRate
        pass = pass && textRatio >= 2.5
        line(textName, "compressed", text.count, zText, ratio: textRatio, goal: "× raw link ≥ 2.5 \(verdict(textRatio >= 2.5))")

        // 1,000 small files against one file of the same size.
        let small = (0..<1000).map { ("s\($0)", pattern(1024, seed: UInt64($0))) }
        let total = small.count * 1024
        let one = measure([("one", pattern(total, seed: 9))], compresses: false)
        line("1 file of 1000 KiB", "one file", total, one)
        let serial = measure(small, compresses: false, pipelines: false)
        line("1,000 files of 1 KiB", "without pipelining (version 1 flow)", total, serial, ratio: serial.seconds / one.seconds)
        let piped = measure(small, compresses: false, pipelines: true)
        let smallRatio = piped.seconds / one.seconds
        pass = pass && smallRatio <= 1.3
        line("1,000 files of 1 KiB", "pipelined", total, piped, ratio: smallRatio, goal: "× one file ≤ 1.3 \(verdict(smallRatio <= 1.3))")

        // Random bytes: compression must not cost.
        let random = pattern(8 << 20, seed: 11)
        let plain = measure([("random", random)], compresses: false)
        line("8 MiB random", "not compressed", random.count, plain)
        let zRandom = measure([("random", random)], compresses: true)
        let randomRatio = plain.seconds / zRandom.seconds
        pass = pass && randomRatio >= 0.99
        line("8 MiB random", "compression asked", random.count, zRandom, ratio: randomRatio,
             goal: "× not compressed ≥ 0.99 \(verdict(randomRatio >= 0.99))")
        print("(seconds: virtual time of the whole session; on air: file data as data/zdata payload bytes; ratio as the goal says)")
        print("overall: \(verdict(pass))")
        return pass
    }

    /// One session with `files` over the model.
    static func measure(_ files: [(String, [UInt8])], compresses: Bool, pipelines: Bool = true) -> Run {
        let store = MemoryFileStore()
        let senderID = Identity.generate(), receiverID = Identity.generate()
        let trust = TrustStore(peers: [.init(name: "bench", key: senderID.publicKey)])
        var sender = SenderSession(identity: senderID, receiverKey: receiverID.publicKey,
                                   files: files.map { MemoryFileSource(name: $0.0, bytes: $0.1) }, compresses: compresses, pipelines: pipelines)
        var receiver = ReceiverSession(identity: receiverID, trust: trust, store: store)
        var options = LoopbackRun.Options(maxDatagramSize: datagramSize)
        options.faults = .perfect
        options.radio = model
        let outcome = LoopbackRun.run(sender: &sender, receiver: &receiver, options: options)
        let intact = outcome.finished && files.allSatisfy { store.committed[$0.0] == $0.1 }
        return Run(seconds: seconds(outcome.virtualTime), airBytes: sender.payloadBytesSent, intact: intact)
    }

    /// Bytes that do not compress (a simple generator: the bench must not depend on a seed's luck).
    static func pattern(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        return (0..<count).map { _ in
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return UInt8(truncatingIfNeeded: state)
        }
    }
}

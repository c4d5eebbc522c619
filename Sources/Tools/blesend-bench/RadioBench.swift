import MemoryTransport
import Pipeline
import Session
import Simulation
import TestDoubles

/// Goodput over the modelled BLE air (`RadioModel`): for each PHY, connection interval, MTU and
/// transport, the raw limit (back-to-back full datagrams one way, no protocol), blesend's goodput
/// (a 1 MiB file through `LoopbackRun` over the model: file bytes ÷ virtual time, handshake to
/// goodbye) and their ratio. Both sides' stacks hold a bounded queue in front of the air
/// (`SendQueue.typical`), so the sender is held back instead of queueing its window. Besides the
/// GATT-sized datagrams, L2CAP CoC rows with large SDUs (2048 and 4096 B, cut into 247-byte
/// K-frames). Goal (issue 11): ≥ 0.90 in every cell. Figures only, no exit status.
enum RadioBench {
    static let fileSize = 1 << 20
    static let goal = 0.90
    static let intervals: [Duration] = [.microseconds(7500), .milliseconds(15), .milliseconds(30), .milliseconds(50)]
    static let mtus = [247, 517]
    /// SDU sizes of the L2CAP CoC rows that do not follow an ATT MTU.
    static let largeSDUs = [2048, 4096]

    /// One row: a transport and a datagram size (`mtu` nil: an L2CAP SDU size of its own).
    struct Row {
        var mtu: Int?
        var gatt: Bool
        var size: Int
    }

    static var rows: [Row] {
        mtus.flatMap { mtu in [true, false].map { Row(mtu: mtu, gatt: $0, size: writeDatagramSize(mtu: mtu)) } }
            + largeSDUs.map { Row(mtu: nil, gatt: false, size: $0) }
    }

    /// Returns the number of cells below the goal.
    @discardableResult
    static func run(caps: [Int?] = [nil, 6], queue: SendQueue? = .typical) -> Int {
        var below = 0
        var cells = 0
        var worst: (ratio: Double, label: String)?
        let queueText = queue.map { "send queue \($0.buffers) LL packets" } ?? "unbounded send queue"
        for cap in caps {
            print("== radio: 1 MiB, LoopbackRun over RadioModel (DLE 251, no LL encryption, \(queueText), "
                  + "packets per event: \(cap.map { "\($0)" } ?? "unlimited")), KiB/s of payload; goal ratio ≥ \(fixed(goal, 2))")
            print(padded("PHY", 5) + padded("CI", 8) + padded("MTU", 5) + padded("transport", 11) + padded("datagram", 10)
                  + leftPadded("raw", 10) + leftPadded("blesend", 10) + leftPadded("ratio", 8) + leftPadded("retx", 6) + "  goal")
            for phy in [RadioModel.PHY.le1M, .le2M] {
                for interval in intervals {
                    for row in rows {
                        let model = RadioModel(phy: phy, dataLength: 251, connectionInterval: interval, maxPacketsPerEvent: cap,
                                               transport: row.gatt ? .gatt : RadioModel.l2capCoC(dataLength: 251), sendQueue: queue)
                        let cell = measure(model: model, datagramSize: row.size)
                        let pass = cell.intact && cell.ratio >= goal
                        cells += 1
                        if !pass { below += 1 }
                        let line = padded(phy == .le1M ? "1M" : "2M", 5) + padded(milliseconds(interval), 8)
                            + padded(row.mtu.map { "\($0)" } ?? "-", 5) + padded(row.gatt ? "GATT" : "L2CAP CoC", 11)
                            + padded("\(row.size) B", 10)
                        if worst.map({ cell.ratio < $0.ratio }) ?? true {
                            worst = (cell.ratio, line.split(separator: " ").joined(separator: " ")
                                     + (cap.map { ", \($0)/event" } ?? ", unlimited/event"))
                        }
                        print(line + leftPadded(fixed(cell.raw / 1024, 1), 10) + leftPadded(fixed(cell.goodput / 1024, 1), 10)
                              + leftPadded(fixed(cell.ratio, 3), 8) + leftPadded("\(cell.retransmissions)", 6)
                              + "  " + (pass ? "" : "< \(fixed(goal, 2))") + (cell.intact ? "" : " [not intact]"))
                        flushOutput()
                    }
                }
            }
            print("")
        }
        print("(raw: \(fileSize) B as back-to-back datagrams one way, nothing back; blesend: file bytes / virtual time of the")
        print(" whole session; L2CAP CoC: MPS 247 so each K-frame fills one LL packet; MTU 247/517 rows: datagram = the")
        print(" GATT write size, MTU - rows: L2CAP SDUs of their own size; retx: the sender's retransmitted data frames.)")
        print("cells below \(fixed(goal, 2)): \(below) of \(cells)" + (worst.map { "; worst: \(fixed($0.ratio, 3)) (\($0.label))" } ?? ""))
        return below
    }

    struct Cell {
        var raw: Double
        var goodput: Double
        var ratio: Double { goodput / raw }
        var intact: Bool
        var retransmissions: Int
    }

    static func measure(model: RadioModel, datagramSize size: Int) -> Cell {
        let count = (fileSize + size - 1) / size
        let rawTime = RadioScheduler<Int>.streamTime(model: model, datagramSize: size, count: count)
        let raw = Double(count * size) / seconds(rawTime)
        let store = MemoryFileStore(keepsBytes: false)
        let source = PatternFileSource(name: "radio.bin", size: UInt64(fileSize))
        var (sender, receiver) = makeEndpoints(files: [source], store: store)
        var options = LoopbackRun.Options(maxDatagramSize: size)
        options.faults = .perfect
        options.radio = model
        let outcome = LoopbackRun.run(sender: &sender, receiver: &receiver, options: options)
        let intact = outcome.finished && store.committed["radio.bin"] != nil && store.patternMismatches == 0
        return Cell(raw: raw, goodput: Double(fileSize) / seconds(outcome.virtualTime), intact: intact,
                    retransmissions: sender.linkStatistics?.retransmissions ?? -1)
    }
}

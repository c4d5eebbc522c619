import MemoryTransport
import Pipeline
import Session
import Simulation
import TestDoubles

/// Goodput over the modelled BLE air (`RadioModel`): for each PHY, connection interval, MTU and
/// transport, the raw limit (back-to-back full datagrams one way, no protocol), blesend's goodput
/// (a 1 MiB file through `LoopbackRun` over the model: file bytes ÷ virtual time, handshake to
/// goodbye) and their ratio. Goal (issue 11): ≥ 0.90 in every cell. Figures only, no exit status.
enum RadioBench {
    static let fileSize = 1 << 20
    static let goal = 0.90
    static let intervals: [Duration] = [.microseconds(7500), .milliseconds(15), .milliseconds(30), .milliseconds(50)]
    static let mtus = [247, 517]

    /// Returns the number of cells below the goal.
    @discardableResult
    static func run(caps: [Int?] = [nil, 6]) -> Int {
        var below = 0
        for cap in caps {
            print("== radio: 1 MiB, LoopbackRun over RadioModel (DLE 251, no LL encryption, "
                  + "packets per event: \(cap.map { "\($0)" } ?? "unlimited")), KiB/s of payload; goal ratio ≥ \(fixed(goal, 2))")
            print(padded("PHY", 5) + padded("CI", 8) + padded("MTU", 5) + padded("transport", 11) + padded("datagram", 10)
                  + leftPadded("raw", 10) + leftPadded("blesend", 10) + leftPadded("ratio", 8) + leftPadded("retx", 6) + "  goal")
            for phy in [RadioModel.PHY.le1M, .le2M] {
                for interval in intervals {
                    for mtu in mtus {
                        for gatt in [true, false] {
                            let size = writeDatagramSize(mtu: mtu)
                            let model = RadioModel(phy: phy, dataLength: 251, connectionInterval: interval, maxPacketsPerEvent: cap,
                                                   transport: gatt ? .gatt : RadioModel.l2capCoC(dataLength: 251))
                            let cell = measure(model: model, datagramSize: size)
                            let pass = cell.intact && cell.ratio >= goal
                            if !pass { below += 1 }
                            print(padded(phy == .le1M ? "1M" : "2M", 5) + padded(milliseconds(interval), 8) + padded("\(mtu)", 5)
                                  + padded(gatt ? "GATT" : "L2CAP CoC", 11) + padded("\(size) B", 10)
                                  + leftPadded(fixed(cell.raw / 1024, 1), 10) + leftPadded(fixed(cell.goodput / 1024, 1), 10)
                                  + leftPadded(fixed(cell.ratio, 3), 8) + leftPadded("\(cell.retransmissions)", 6)
                                  + "  " + (pass ? "" : "< \(fixed(goal, 2))") + (cell.intact ? "" : " [not intact]"))
                            flushOutput()
                        }
                    }
                }
            }
            print("")
        }
        print("(raw: \(fileSize) B as back-to-back datagrams one way, nothing back; blesend: file bytes / virtual time of the")
        print(" whole session; L2CAP CoC: SDU = the GATT datagram size, MPS 247 so each K-frame fills one LL packet;")
        print(" retx: the sender's retransmitted data frames.)")
        print("cells below \(fixed(goal, 2)): \(below)")
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

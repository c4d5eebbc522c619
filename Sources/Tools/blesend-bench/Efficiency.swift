import MemoryTransport
import Pipeline
import Session
import Simulation
import TestDoubles
import Transfer

/// Wire efficiency: file bytes ÷ every datagram byte both ways (handshake, records, acks,
/// retransmissions), for a 1 MiB file through `LoopbackRun` (virtual clock, 10 ms one way).
enum EfficiencyBench {
    static let fileSize = 1 << 20
    static let mtus = [23, 185, 247, 517]
    /// Goals on a clean link, by MTU.
    static let goals: [Int: Double] = [247: 0.95, 185: 0.90, 23: 0.70]

    static func run() -> Bool {
        print("== efficiency: 1 MiB file, LoopbackRun (SimulatedLink, 10 ms one way), file bytes / all datagram bytes both ways")
        print(padded("link", 10) + padded("MTU", 5) + padded("datagram", 10) + leftPadded("efficiency", 11)
              + leftPadded("on wire", 12) + leftPadded("virt. time", 13) + leftPadded("conns", 7)
              + leftPadded("retx S/R", 11) + leftPadded("fast/RTO", 11) + leftPadded("first data", 12) + "  goal")
        var allPass = true
        let profiles: [(String, FaultProfile)] = [("clean", .clean), ("loss 5%", FaultProfile(loss: 0.05))]
        for (label, faults) in profiles {
            for mtu in mtus {
                let size = writeDatagramSize(mtu: mtu)
                let store = MemoryFileStore(keepsBytes: false)
                let source = PatternFileSource(name: "efficiency.bin", size: UInt64(fileSize))
                var (sender, receiver) = makeEndpoints(files: [source], store: store)
                var options = LoopbackRun.Options(maxDatagramSize: size)
                options.faults = faults
                options.seed = UInt64(mtu)
                let outcome = LoopbackRun.run(sender: &sender, receiver: &receiver, options: options)
                let wire = outcome.bytesFromSender + outcome.bytesFromReceiver
                let efficiency = Double(fileSize) / Double(max(wire, 1))
                let intact = outcome.finished && store.committed["efficiency.bin"] != nil && store.patternMismatches == 0
                let retxS = sender.linkStatistics?.retransmissions ?? -1
                let retxR = receiver.linkStatistics?.retransmissions ?? -1
                let fast = sender.linkStatistics?.fastRetransmissions ?? -1
                let timeouts = sender.linkStatistics?.timeouts ?? -1
                var goal = ""
                if label == "clean", let target = goals[mtu] {
                    let pass = intact && efficiency >= target
                    allPass = allPass && pass
                    goal = "≥ \(fixed(target * 100, 0)) %  \(verdict(pass))"
                }
                if !intact {
                    goal += "  [transfer did not complete intact: \(outcome.senderErrors) \(outcome.receiverErrors)]"
                    if label == "clean" { allPass = false }
                }
                print(padded(label, 10) + padded("\(mtu)", 5) + padded("\(size) B", 10)
                      + leftPadded(fixed(efficiency * 100, 2) + " %", 11)
                      + leftPadded("\(wire) B", 12)
                      + leftPadded(fixed(seconds(outcome.virtualTime), 3) + " s", 13)
                      + leftPadded("\(outcome.connections)", 7)
                      + leftPadded("\(retxS)/\(retxR)", 11)
                      + leftPadded("\(fast)/\(timeouts)", 11)
                      + leftPadded(outcome.timeToFirstData.map(milliseconds) ?? "-", 12)
                      + "  " + goal)
                flushOutput()
            }
        }
        print("(retx S/R: retransmitted data frames from the last connection's sender / receiver link statistics;")
        print(" fast/RTO: of the sender's, fast retransmissions / retransmission-timer expiries that doubled the RTO;")
        print(" first data: virtual time from connect to the first datagram after the handshake round trip (10 ms each way here).)")
        return allPass
    }
}

import Foundation
import Keys
import Pipeline
import Session
import Storage

/// `blesend-labcheck message1 KEY RECEIVER.pub FILE [DATAGRAM]`: the datagrams of a sender's
/// handshake message 1 offering FILE (docs/protocol.md §3), one hex line each, as a real sender
/// with KEY would write them to RECEIVER now. The lab's stranger writes them through its own
/// link (`hostile-central.py --mode replay`): a message 1 recorded from the air and replayed.
enum MessageOne {
    static func run(_ args: [String]) -> Int32 {
        guard args.count == 3 || args.count == 4 else {
            FileHandle.standardError.write(Data("usage: blesend-labcheck message1 KEY RECEIVER.pub FILE [DATAGRAM]\n".utf8))
            return 2
        }
        do {
            let identity = try KeyFile.loadIdentity(path: args[0])
            let receiver = try KeyFile.loadPublicKey(path: args[1])
            let source = try LocalFileSource(path: args[2])
            let datagramSize = args.count == 4 ? Int(args[3]) ?? 244 : 244
            var session = SenderSession(identity: identity, receiverKey: receiver, files: [source])
            var wallClock = timespec()
            clock_gettime(CLOCK_REALTIME, &wallClock)
            let now = Instant(nanoseconds: 1)
            try session.connect(maxDatagramSize: datagramSize, now: now,
                                wallClock: UInt64(wallClock.tv_sec) * 1_000_000_000 + UInt64(wallClock.tv_nsec))
            while let datagram = try session.nextDatagram(now: now) {
                print(datagram.map { String(format: "%02x", $0) }.joined())
            }
            return 0
        } catch {
            FileHandle.standardError.write(Data("blesend-labcheck message1: \(error)\n".utf8))
            return 1
        }
    }
}

import DequeModule
import Keys
import MemoryTransport
import Pipeline
import Session
import Transfer

/// Runs a sender and a receiver against each other over a `SimulatedLink`, on a virtual clock,
/// deterministically: the same seed gives the same run. Used by the session tests and the
/// benchmarks. Reconnects after a cut or a dead link, as the real tools do.
public struct LoopbackRun {
    public struct Options {
        public var faults: FaultProfile = .clean
        public var maxDatagramSize: Int
        public var seed: UInt64 = 1
        /// Cut the link after this many sender datagrams (counted over the whole run), once each.
        public var cutsAfterDatagrams: [Int] = []
        /// Change the datagram size (MTU) after this many sender datagrams.
        public var mtuChange: (afterDatagrams: Int, size: Int)?
        public var maxConnections = 20
        /// Virtual time after which the run gives up.
        public var timeLimit: Duration = .seconds(3600)
        /// Keep per-progress events (off for huge runs, to keep memory flat).
        public var recordProgress = false

        public init(maxDatagramSize: Int) { self.maxDatagramSize = maxDatagramSize }
    }

    public struct Outcome {
        public var senderEvents: [SenderSession.Event] = []
        public var receiverEvents: [ReceiverSession.Event] = []
        /// Datagram bytes put on the link by the sender / by the receiver.
        public var bytesFromSender = 0
        public var bytesFromReceiver = 0
        public var connections = 0
        /// Errors that ended connections (the run may still have finished after reconnecting).
        public var senderErrors: [SessionError] = []
        public var receiverErrors: [SessionError] = []
        public var virtualTime: Duration = .zero
        /// Virtual time from the first connection to the first datagram after the handshake
        /// (which carries the first file bytes).
        public var timeToFirstData: Duration?
        public var finished = false
    }

    public static let wallClockBase: UInt64 = 1_763_000_000_000_000_000

    public static func run(sender: inout SenderSession, receiver: inout ReceiverSession, options: Options) -> Outcome {
        var outcome = Outcome()
        var now = Instant.zero
        var datagramsFromSender = 0
        var pendingCuts = Deque(options.cutsAfterDatagrams.sorted())
        var mtuChange = options.mtuChange
        var size = options.maxDatagramSize
        let deadline = Instant.zero.advanced(by: options.timeLimit)
        var seed = options.seed

        func record(_ s: inout SenderSession, _ r: inout ReceiverSession) {
            for event in s.takeEvents() {
                if !options.recordProgress, case .transfer(.progress) = event { continue }
                outcome.senderEvents.append(event)
            }
            for event in r.takeEvents() {
                if !options.recordProgress, case .transfer(.progress) = event { continue }
                outcome.receiverEvents.append(event)
            }
        }

        connections: while outcome.connections < options.maxConnections, now < deadline {
            outcome.connections += 1
            var link = SimulatedLink(faults: options.faults, maxDatagramSize: size, seed: seed)
            seed &+= 0x9E37_79B9
            do {
                try sender.connect(maxDatagramSize: size, now: now, wallClock: wallClockBase + now.nanoseconds)
                try receiver.accept(maxDatagramSize: size, now: now, wallClock: wallClockBase + now.nanoseconds)
            } catch {
                outcome.senderErrors.append(error)
                break
            }
            let connectedAt = now

            rounds: while now < deadline {
                var lost = false
                defer {
                    if lost {
                        link.cut()
                        sender.linkLost()
                        receiver.linkLost(now: now)
                    }
                    record(&sender, &receiver)
                }
                // 1. Everything the sender wants to send now (cuts and MTU changes happen here).
                do {
                    while let datagram = try sender.nextDatagram(now: now) {
                        if outcome.timeToFirstData == nil, sender.isEstablished {
                            outcome.timeToFirstData = now.duration(since: connectedAt)
                        }
                        link.transmit(datagram, from: .a, now: now)
                        outcome.bytesFromSender += datagram.count
                        datagramsFromSender += 1
                        if let change = mtuChange, datagramsFromSender >= change.afterDatagrams {
                            size = change.size
                            link.maxDatagramSize = size
                            sender.setMaxDatagramSize(size)
                            receiver.setMaxDatagramSize(size)
                            mtuChange = nil
                        }
                        if let cut = pendingCuts.first, datagramsFromSender >= cut {
                            pendingCuts.removeFirst()
                            lost = true
                            continue connections
                        }
                    }
                } catch {
                    outcome.senderErrors.append(error)
                    lost = true
                    if error.isRecoverable { continue connections }
                    break connections
                }
                // 2. ... and the receiver.
                while let datagram = receiver.nextDatagram(now: now) {
                    link.transmit(datagram, from: .b, now: now)
                    outcome.bytesFromReceiver += datagram.count
                }
                // 3. Deliver what is due; if anything arrived, both sides may answer at once.
                let due = link.deliver(now: now)
                for (side, datagram) in due {
                    do {
                        if side == .b {
                            try receiver.receive(datagram: datagram, now: now)
                        } else {
                            try sender.receive(datagram: datagram, now: now)
                        }
                    } catch {
                        lost = true
                        if side == .b {
                            outcome.receiverErrors.append(error)
                        } else {
                            outcome.senderErrors.append(error)
                            if !error.isRecoverable { break connections }
                        }
                        continue connections
                    }
                }
                if sender.isFinished && (receiver.connectionComplete || !receiver.isConnected) {
                    outcome.finished = true
                    break connections
                }
                if receiver.connectionComplete {
                    lost = true
                    continue connections
                }
                if !due.isEmpty { continue rounds }
                // 4. Move the clock to the next thing that happens, and run the timers.
                guard let next = [link.nextDeliveryTime, sender.nextDeadline, receiver.nextDeadline].compactMap({ $0 }).min() else {
                    // Nothing in flight and nobody waiting.
                    if sender.isFinished { outcome.finished = true; break connections }
                    now = now.advanced(by: .milliseconds(1))
                    continue rounds
                }
                now = max(now, next)
                do {
                    try sender.handleTimers(now: now)
                } catch {
                    outcome.senderErrors.append(error)
                    lost = true
                    if error.isRecoverable { continue connections }
                    break connections
                }
                do {
                    try receiver.handleTimers(now: now)
                } catch {
                    outcome.receiverErrors.append(error)
                    lost = true
                    continue connections
                }
            }
        }
        record(&sender, &receiver)
        outcome.virtualTime = now.duration(since: .zero)
        return outcome
    }
}

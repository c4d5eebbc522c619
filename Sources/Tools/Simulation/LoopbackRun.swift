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
        /// The BLE air the link models (nil: unlimited bandwidth); the sender is the central.
        /// With a radio, `faults.latency` is host latency on top of the air time.
        public var radio: RadioModel?
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
        var size = options.maxDatagramSize
        var mtuChange = options.mtuChange
        var pendingCuts = Deque(options.cutsAfterDatagrams.sorted())
        let deadline = Instant.zero.advanced(by: options.timeLimit)
        var seed = options.seed
        var network = VirtualNetwork(link: SimulatedLink(faults: options.faults, maxDatagramSize: size, seed: seed, radio: options.radio))

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
        func countBytes(_ network: VirtualNetwork) {
            outcome.bytesFromSender += network.link.bytesTransmitted(from: .a)
            outcome.bytesFromReceiver += network.link.bytesTransmitted(from: .b)
        }

        connections: while outcome.connections < options.maxConnections, network.now < deadline {
            outcome.connections += 1
            // A fresh link per connection (its own fault sequence); cuts count the sender's
            // datagrams over the whole run.
            countBytes(network)
            network.link = SimulatedLink(faults: options.faults, maxDatagramSize: size, seed: seed, radio: options.radio)
            seed &+= 0x9E37_79B9
            network.reconnect(cutAfter: pendingCuts.first.map { max(0, $0 - network.sentCount(from: .a)) })
            let now = network.now
            do {
                try sender.connect(maxDatagramSize: size, now: now, wallClock: wallClockBase + now.nanoseconds,
                                   receiverExtensions: receiver.extensions)
                try receiver.accept(maxDatagramSize: size, now: now, wallClock: wallClockBase + now.nanoseconds)
            } catch {
                outcome.senderErrors.append(error)
                break
            }
            let connectedAt = now
            var lost = true
            defer {
                if lost {
                    sender.linkLost()
                    receiver.linkLost(now: network.now)
                }
                record(&sender, &receiver)
            }
            do {
                // Whether the sender was established, and what it had sent, before the round.
                var established = sender.isEstablished, sentBefore = network.sentCount(from: .a)
                let ending = try network.run(&sender, &receiver, until: deadline) { sender, receiver, network, step in
                    defer { (established, sentBefore) = (sender.isEstablished, network.sentCount(from: .a)) }
                    guard case .round = step else { return false }
                    record(&sender, &receiver)
                    if outcome.timeToFirstData == nil, established, network.sentCount(from: .a) > sentBefore {
                        outcome.timeToFirstData = network.now.duration(since: connectedAt)
                    }
                    if let change = mtuChange, network.sentCount(from: .a) >= change.afterDatagrams {
                        size = change.size
                        network.link.maxDatagramSize = size
                        sender.setMaxDatagramSize(size)
                        receiver.setMaxDatagramSize(size)
                        mtuChange = nil
                    }
                    return sender.isFinished && (receiver.connectionComplete || !receiver.isConnected) || receiver.connectionComplete
                }
                switch ending {
                case .cut:
                    pendingCuts.removeFirst()
                    continue connections
                case .done:
                    guard sender.isFinished && (receiver.connectionComplete || !receiver.isConnected) else { continue connections }
                    outcome.finished = true
                    lost = false
                    break connections
                case .idle:
                    // Nothing in flight and nobody waiting.
                    outcome.finished = sender.isFinished
                    break connections
                case .timeLimit:
                    break connections
                }
            } catch {
                switch error {
                case .a(let failure):
                    outcome.senderErrors.append(failure)
                    if !failure.isRecoverable { break connections }
                case .b(let failure):
                    outcome.receiverErrors.append(failure)
                }
                continue connections
            }
        }
        countBytes(network)
        record(&sender, &receiver)
        outcome.virtualTime = network.now.duration(since: .zero)
        return outcome
    }
}

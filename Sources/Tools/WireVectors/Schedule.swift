import Pipeline

/// A vector's log cut into the recorder's steps (see `Recorder`): connections, rounds, ticks,
/// cuts. A round is the datagrams of the sender's batch (with what the receiver got for them),
/// then those of the receiver's batch; both halves may be empty.
struct Schedule {
    /// A log line and its position (1-based, for messages).
    struct Line {
        let number: Int
        let time: Instant
        let route: WireVector.Route
        let bytes: [UInt8]
    }

    enum Step {
        case connect(Int)
        case round(senderHalf: [Line], receiverHalf: [Line])
        case tick(senderDue: Bool, receiverDue: Bool)
        case cut
    }

    struct TimedStep {
        /// The log position of the step's first line (for a round: of its first datagram).
        let number: Int
        let time: Instant
        let step: Step
    }

    let steps: [TimedStep]

    init(_ events: [WireVector.Event]) throws(ReplayFailure) {
        var steps: [TimedStep] = []
        var senderHalf: [Line] = [], receiverHalf: [Line] = []
        func closeRound() {
            guard let first = senderHalf.first ?? receiverHalf.first else { return }
            steps.append(TimedStep(number: first.number, time: first.time,
                                   step: .round(senderHalf: senderHalf, receiverHalf: receiverHalf)))
            senderHalf = []
            receiverHalf = []
        }
        for (index, event) in events.enumerated() {
            let number = index + 1
            switch event.kind {
            case .datagram(let route, let bytes):
                let line = Line(number: number, time: event.time, route: route, bytes: bytes)
                if let first = senderHalf.first ?? receiverHalf.first, first.time != event.time {
                    throw ReplayFailure(event: number, time: event.time, .malformedLog("a round's datagrams all carry the time of the round"))
                }
                if route.half == .sender {
                    // The sender's half after a receiver's half begins the next round.
                    if !receiverHalf.isEmpty { closeRound() }
                    senderHalf.append(line)
                } else {
                    receiverHalf.append(line)
                }
            case .connect(let connection):
                closeRound()
                steps.append(TimedStep(number: number, time: event.time, step: .connect(connection)))
            case .tick(let senderDue, let receiverDue):
                closeRound()
                steps.append(TimedStep(number: number, time: event.time, step: .tick(senderDue: senderDue, receiverDue: receiverDue)))
            case .cut:
                closeRound()
                steps.append(TimedStep(number: number, time: event.time, step: .cut))
            }
        }
        closeRound()
        self.steps = steps
    }
}

import Pipeline

/// First contact (`blerecv --ask`): how long a sender key or a device that was declined, or whose
/// prompt went unanswered, is declined again without a prompt. Each such outcome doubles the
/// pause, from `initialPause` up to `maximumPause`; an acceptance forgets the subject. Sans-IO:
/// time comes in as `now`.
///
/// This keeps a stranger in range from putting prompt after prompt on the terminal (each one a
/// chance that someone types the code of another sender, or a 1 in 10^6 guess) by reconnecting.
struct PromptBackoff {
    static let initialPause = Duration.seconds(30)
    static let maximumPause = Duration.seconds(60 * 60)
    /// Subjects remembered at most; beyond that, those whose pause ended first are forgotten.
    static let capacity = 512

    private struct Entry {
        /// Declines and unanswered prompts so far.
        var strikes: Int
        var until: Instant
    }
    private var entries: [String: Entry] = [:]

    /// How many subjects are remembered.
    var count: Int { entries.count }

    /// When `subject` may be asked about again; nil if now.
    func pausedUntil(_ subject: String, now: Instant) -> Instant? {
        guard let entry = entries[subject], now < entry.until else { return nil }
        return entry.until
    }

    /// `subject` was declined, or its prompt was not answered, at `now`.
    mutating func declined(_ subject: String, now: Instant) {
        var entry = entries[subject] ?? Entry(strikes: 0, until: now)
        // A subject whose last pause ended a whole maximum pause ago starts afresh.
        if entry.strikes > 0, now.duration(since: entry.until) >= Self.maximumPause { entry.strikes = 0 }
        entry.strikes += 1
        entry.until = now.advanced(by: Self.pause(afterStrikes: entry.strikes))
        entries[subject] = entry
        if entries.count > Self.capacity { forgetOldest(now: now) }
    }

    /// `subject` was accepted: it owes nothing.
    mutating func accepted(_ subject: String) {
        entries.removeValue(forKey: subject)
    }

    /// The pause after the `strikes`-th decline: `initialPause` doubled `strikes - 1` times, capped.
    static func pause(afterStrikes strikes: Int) -> Duration {
        var pause = initialPause
        for _ in 1..<max(1, strikes) {
            pause = pause * 2
            if pause >= maximumPause { return maximumPause }
        }
        return min(pause, maximumPause)
    }

    private mutating func forgetOldest(now: Instant) {
        entries = entries.filter { now < $0.value.until }
        while entries.count > Self.capacity, let oldest = entries.min(by: { $0.value.until < $1.value.until }) {
            entries.removeValue(forKey: oldest.key)
        }
    }
}

/// First contact (`blerecv --ask`): which unknown sender the user is asked about. One prompt at a
/// time: a stranger that arrives while a prompt is open is declined as busy, without a prompt (its
/// sender is told no, exit 66, and may send again later). A sender key or device in its
/// `PromptBackoff` pause is declined without a prompt too. Sans-IO.
struct FirstContactGate {
    enum Admission: Equatable {
        /// Show the prompt; `settle` must follow.
        case ask
        /// Another prompt is open.
        case busy
        /// One of the subjects was declined or left unanswered recently; asks again from `until`.
        case pausedUntil(Instant)
    }

    /// How a prompt ended.
    enum Outcome: Equatable {
        case accepted
        /// A no, a wrong code, no name, or no answer in time.
        case declined
    }

    private(set) var backoff = PromptBackoff()
    /// The subjects of the open prompt.
    private var open: [String]?

    var isAsking: Bool { open != nil }

    /// Whether to ask about a stranger known by `subjects` (its key, its device).
    mutating func admit(_ subjects: [String], now: Instant) -> Admission {
        guard open == nil else { return .busy }
        if let until = subjects.compactMap({ backoff.pausedUntil($0, now: now) }).max() { return .pausedUntil(until) }
        open = subjects
        return .ask
    }

    /// The open prompt ended with `outcome` at `now`.
    mutating func settle(_ outcome: Outcome, now: Instant) {
        guard let subjects = open else { return }
        open = nil
        for subject in subjects {
            switch outcome {
            case .accepted: backoff.accepted(subject)
            case .declined: backoff.declined(subject, now: now)
            }
        }
    }

    /// The subjects a stranger is known by: its key and, when known, the device it came from.
    static func subjects(key: [UInt8], device: String?) -> [String] {
        let hex = key.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
        return ["key " + hex] + (device.map { ["device " + $0] } ?? [])
    }
}

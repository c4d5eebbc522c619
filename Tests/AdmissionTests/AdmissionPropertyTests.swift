import Admission
import MemoryTransport
import Pipeline
import Testing

/// Random event streams against the policy, checking its invariants after every step.
@Suite("Admission policy properties")
struct AdmissionPropertyTests {
    static let stepsPerRun = 500

    static let seeds: Range<UInt64> = 0..<24

    @Test(arguments: seeds)
    func invariantsHoldAfterEveryStep(seed: UInt64) {
        _ = Self.run(seed: seed)
    }

    /// The streams are worth something only if they reach the rules: across the seeds every kind
    /// of action and reason turns up.
    @Test func theStreamsReachEveryRule() {
        var seen: [String: Int] = [:]
        for seed in Self.seeds { seen.merge(Self.run(seed: seed), uniquingKeysWith: +) }
        let expected = ["admit", "answerBusy", "refuse.backoff", "refuse.busy", "refuse.alreadyHandshaking", "close.handshakeTimeout",
                        "close.preempted", "close.replaced", "close.stalled", "close.supersededBySameKey", "close.promptTimeout",
                        "disconnect.bareLink", "advertise", "showPrompt", "promptBusy", "reregister", "reregisterDeferred"]
        for kind in expected { #expect(seen[kind, default: 0] > 0, Comment(rawValue: "never: \(kind); seen \(seen)")) }
    }

    /// One seeded stream, checked step by step; returns how often each kind of action came out.
    static func run(seed: UInt64) -> [String: Int] {
        var random = SeededRandom(seed: seed)
        let configuration = AdmissionConfiguration(
            maxLinks: Int.random(in: 2...4, using: &random),
            maxUnauthenticated: Int.random(in: 1...3, using: &random),
            bareLinkTimeout: .milliseconds(Int.random(in: 500...6000, using: &random)),
            handshakeTimeout: .milliseconds(Int.random(in: 1000...12000, using: &random)),
            promptTimeout: .milliseconds(Int.random(in: 2000...30000, using: &random)),
            stallTimeout: .milliseconds(Int.random(in: 1000...20000, using: &random)),
            backoff: .init(base: .milliseconds(Int.random(in: 100...3000, using: &random)),
                           cap: .seconds(Int.random(in: 3...60, using: &random)),
                           rememberedDevices: Int.random(in: 1...4, using: &random)),
            maxBusyAnswers: Int.random(in: 0...2, using: &random))
        var checker = InvariantChecker(configuration: configuration)
        var now = Instant.zero
        var nextChannel: UInt64 = 1
        for _ in 0..<stepsPerRun {
            // Time moves on: sometimes exactly to the next deadline, else by up to 2.5 s.
            if let deadline = checker.policy.nextDeadline, deadline > now, Int.random(in: 0..<4, using: &random) == 0 {
                now = deadline
            } else {
                now = now.advanced(by: .milliseconds(Int.random(in: 0...2500, using: &random)))
            }
            // The driver runs due timers before anything else, as the pumps do.
            if let deadline = checker.policy.nextDeadline, deadline <= now {
                checker.step(nil, now: now)
            }
            let live = checker.policy.admittedChannels + checker.policy.busyAnswerChannels.sorted { $0.rawValue < $1.rawValue }
            checker.step(randomInput(&random, nextChannel: &nextChannel, live: live), now: now)
        }
        return checker.seen
    }

    /// A random event: mostly about the channels the policy holds (`live`), else about any channel
    /// the stream named before or one it never did.
    static func randomInput(_ random: inout SeededRandom, nextChannel: inout UInt64, live: [ChannelID]) -> AdmissionInput {
        let device = DeviceID("dev\(Int.random(in: 0..<6, using: &random))")
        let peer = PeerKeyID([UInt8.random(in: 0..<4, using: &random)])
        let anyChannel = ChannelID(UInt64.random(in: 1...(nextChannel + 1), using: &random))
        let known = Int.random(in: 0..<10, using: &random) < 7 ? live.randomElement(using: &random) ?? anyChannel : anyChannel
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<10: return .linkUp(device)
        case 10..<15: return .linkDown(device)
        case 15..<40:
            defer { nextChannel += 1 }
            return .channelOpened(ChannelID(nextChannel), device: device)
        case 40..<55: return .authenticated(known, peer: peer)
        case 55..<70: return .progress(known)
        case 70..<80:
            let outcomes: [ChannelOutcome] = [.ended, .handshakeFailed, .lost]
            return .channelClosed(known, outcome: outcomes[Int.random(in: 0..<3, using: &random)])
        case 80..<88: return .promptRequested(known)
        case 88..<95: return .promptFinished(known)
        default: return .reregisterRequested
        }
    }
}

/// Runs one step on a policy and checks what must always hold.
struct InvariantChecker {
    let configuration: AdmissionConfiguration
    var policy: AdmissionPolicy
    /// The device of every channel ever admitted.
    var devices: [ChannelID: DeviceID] = [:]
    /// How often each kind of action came out ("close.preempted", "admit", …).
    var seen: [String: Int] = [:]

    init(configuration: AdmissionConfiguration) {
        self.configuration = configuration
        policy = AdmissionPolicy(configuration: configuration)
    }

    /// `input` at `now`, or the timers if nil.
    mutating func step(_ input: AdmissionInput?, now: Instant) {
        let before = Dictionary(uniqueKeysWithValues: policy.admittedChannels.map { ($0, policy.status(of: $0)) })
        let wasAdvertising = policy.isAdvertising
        let answeringBusyBefore = policy.busyAnswerChannels
        let actions = input.map { policy.handle($0, now: now) } ?? policy.handleTimers(now: now)
        let context = "\(input.map { "\($0)" } ?? "timers") at \(now): \(actions)"
        let label = Comment(rawValue: context)
        let admitted = Set(policy.admittedChannels)

        for action in actions {
            seen[Self.kind(of: action), default: 0] += 1
            switch action {
            case .admit(let channel):
                guard case .channelOpened(channel, let device)? = input else {
                    Issue.record(Comment(rawValue: "admitted a channel nobody opened: " + context))
                    continue
                }
                devices[channel] = device
                #expect(admitted.contains(channel), label)
            case .refuse(let channel, _):
                #expect(!admitted.contains(channel), label)
            case .answerBusy(let channel, let retryAfter, let ahead):
                guard case .channelOpened(channel, _)? = input else {
                    Issue.record(Comment(rawValue: "answered busy on a channel nobody opened: " + context))
                    continue
                }
                #expect(!admitted.contains(channel) && policy.busyAnswerChannels.contains(channel), label)
                #expect(retryAfter > now && ahead >= 0 && ahead < policy.waitingDevices, label)
            case .close(let channel, let reason):
                #expect((before[channel] != nil || answeringBusyBefore.contains(channel)) && !admitted.contains(channel), label)
                #expect(!policy.busyAnswerChannels.contains(channel), label)
                if reason == .preempted { #expect(before[channel] == .handshaking, Comment(rawValue: "pre-empted a channel not handshaking: " + context)) }
                if reason == .stalled || reason == .supersededBySameKey {
                    if case .authenticated? = before[channel] {} else { Issue.record(Comment(rawValue: "closed a session not authenticated: " + context)) }
                }
            case .advertise(let on):
                #expect(on != wasAdvertising && on == policy.isAdvertising, label)
            case .showPrompt(let channel):
                #expect(policy.openPrompt == channel, label)
            case .disconnect, .promptBusy, .reregister, .reregisterDeferred:
                break
            }
        }
        #expect(policy.slotsInUse <= configuration.maxLinks, label)
        #expect(policy.unauthenticatedCount <= min(configuration.maxUnauthenticated, configuration.maxLinks - 1), label)
        #expect(policy.isAdvertising == (policy.slotsInUse < configuration.maxLinks), label)
        #expect(policy.backoff.count <= configuration.backoff.rememberedDevices, label)
        #expect(policy.busyAnswerChannels.count <= configuration.maxBusyAnswers, label)
        #expect(policy.busyAnswerChannels.isDisjoint(with: admitted), label)
        var unauthenticatedDevices: [DeviceID] = []
        var peers: [PeerKeyID] = []
        for channel in policy.admittedChannels {
            switch policy.status(of: channel) {
            case .handshaking?, .prompting?: unauthenticatedDevices.append(devices[channel] ?? DeviceID("?"))
            case .authenticated(let peer)?: peers.append(peer)
            case nil: Issue.record(Comment(rawValue: "an admitted channel without a status: " + context))
            }
        }
        #expect(Set(unauthenticatedDevices).count == unauthenticatedDevices.count, Comment(rawValue: "two unauthenticated channels on one device: " + context))
        #expect(Set(peers).count == peers.count, Comment(rawValue: "one key authenticated on two channels: " + context))
        #expect(policy.admittedChannels.filter { policy.status(of: $0) == .prompting }.count <= 1, label)
        if let prompt = policy.openPrompt { #expect(policy.status(of: prompt) == .prompting, label) }
        if input == nil, let next = policy.nextDeadline {
            #expect(next > now, Comment(rawValue: "a deadline in the past after handleTimers: " + context))
        }
    }

    static func kind(of action: AdmissionAction) -> String {
        switch action {
        case .admit: "admit"
        case .answerBusy: "answerBusy"
        case .refuse(_, let refusal): "refuse.\(refusal.code)"
        case .close(_, let reason): "close.\(reason.rawValue)"
        case .disconnect(_, let reason): "disconnect.\(reason.rawValue)"
        case .advertise: "advertise"
        case .showPrompt: "showPrompt"
        case .promptBusy: "promptBusy"
        case .reregister: "reregister"
        case .reregisterDeferred: "reregisterDeferred"
        }
    }
}

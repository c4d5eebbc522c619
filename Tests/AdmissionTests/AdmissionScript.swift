import Admission
import Pipeline
import Testing

/// One row of the admission table: a named script of timed steps, each with the actions it must
/// produce, run on a fresh policy.
struct AdmissionScript: Sendable, CustomTestStringConvertible {
    let name: String
    /// The rules of `AdmissionPolicy` the row covers (numbers as in its documentation).
    let rules: [Int]
    let configuration: AdmissionConfiguration
    let steps: [Step]

    /// The default configuration answers no channel `busy` (rule 12 has rows of its own).
    init(_ name: String, rules: [Int], configuration: AdmissionConfiguration = .init(bareLinkTimeout: .seconds(5), maxBusyAnswers: 0),
         _ steps: [Step]) {
        self.name = name
        self.rules = rules
        self.configuration = configuration
        self.steps = steps
    }

    var testDescription: String {
        rules.isEmpty ? "edge: \(name)" : "rule \(rules.map(String.init).joined(separator: ", ")): \(name)"
    }

    /// Runs every step and checks its actions (and the invariants every step keeps).
    func run() {
        var policy = AdmissionPolicy(configuration: configuration)
        for (number, step) in steps.enumerated() {
            let label = Comment(rawValue: "\(name), step \(number + 1) at \(step.at)")
            switch step.event {
            case .input(let input):
                #expect(policy.handle(input, now: step.at) == step.expect, label)
            case .timers:
                #expect(policy.handleTimers(now: step.at) == step.expect, label)
                if let next = policy.nextDeadline { #expect(next > step.at, label) }
            case .nextDeadline(let expected):
                #expect(policy.nextDeadline == expected, label)
            case .status(let channel, let expected):
                #expect(policy.status(of: channel) == expected, label)
            }
            #expect(policy.slotsInUse <= configuration.maxLinks, label)
            #expect(policy.unauthenticatedCount <= configuration.unauthenticatedCap, label)
            #expect(policy.isAdvertising == (policy.slotsInUse < configuration.maxLinks), label)
            #expect(policy.busyAnswerChannels.count <= configuration.maxBusyAnswers, label)
        }
    }
}

/// A step of a script: an input, a timer run, or a look at the policy, at an instant.
struct Step: Sendable {
    enum Event: Sendable {
        case input(AdmissionInput)
        case timers
        case nextDeadline(Instant?)
        case status(ChannelID, AdmissionPolicy.ChannelStatus?)
    }

    let at: Instant
    let event: Event
    let expect: [AdmissionAction]

    /// `input` at `at` seconds must produce `expect`.
    static func on(_ at: Double, _ input: AdmissionInput, _ expect: [AdmissionAction] = []) -> Step {
        Step(at: seconds(at), event: .input(input), expect: expect)
    }

    static func on(_ at: Instant, _ input: AdmissionInput, _ expect: [AdmissionAction] = []) -> Step {
        Step(at: at, event: .input(input), expect: expect)
    }

    /// `handleTimers` at `at` must produce `expect`.
    static func timers(_ at: Double, _ expect: [AdmissionAction] = []) -> Step {
        Step(at: seconds(at), event: .timers, expect: expect)
    }

    static func timers(_ at: Instant, _ expect: [AdmissionAction] = []) -> Step {
        Step(at: at, event: .timers, expect: expect)
    }

    /// `nextDeadline` is `expected` seconds (nil: none).
    static func deadline(_ expected: Double?) -> Step {
        Step(at: .zero, event: .nextDeadline(expected.map(seconds)), expect: [])
    }

    static func deadline(_ expected: Instant) -> Step {
        Step(at: .zero, event: .nextDeadline(expected), expect: [])
    }

    /// The channel stands as `expected` (nil: the policy does not hold it).
    static func status(_ channel: ChannelID, _ expected: AdmissionPolicy.ChannelStatus?) -> Step {
        Step(at: .zero, event: .status(channel, expected), expect: [])
    }
}

/// `value` seconds after the origin.
func seconds(_ value: Double) -> Instant {
    Instant(nanoseconds: UInt64((value * 1e9).rounded()))
}

/// One nanosecond (the clock's tick) before `value` seconds.
func tickBefore(_ value: Double) -> Instant {
    seconds(value).advanced(by: .nanoseconds(-1))
}

// Names the rows use.
let devA = DeviceID("/org/bluez/hci0/dev_AA"), devB = DeviceID("/org/bluez/hci0/dev_BB")
let devC = DeviceID("/org/bluez/hci0/dev_CC"), devD = DeviceID("/org/bluez/hci0/dev_DD")
let devE = DeviceID("/org/bluez/hci0/dev_EE"), devF = DeviceID("/org/bluez/hci0/dev_FF")
let alice = PeerKeyID([0xa1]), bob = PeerKeyID([0xb0]), carol = PeerKeyID([0xc0])

func ch(_ number: UInt64) -> ChannelID { ChannelID(number) }

/// Shorthands for the inputs the rows use most.
func open(_ channel: UInt64, _ device: DeviceID) -> AdmissionInput { .channelOpened(ch(channel), device: device) }
func auth(_ channel: UInt64, _ peer: PeerKeyID) -> AdmissionInput { .authenticated(ch(channel), peer: peer) }
func closed(_ channel: UInt64, _ outcome: ChannelOutcome = .ended) -> AdmissionInput {
    .channelClosed(ch(channel), outcome: outcome)
}

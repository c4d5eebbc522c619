import Pipeline
import Testing

/// Toy layers that make the stack's rules visible: what moves when, back-pressure, timers, errors.

struct ToyError: Error, Equatable { let layer: String }

/// Splits strings into characters going down, joins characters back into strings coming up
/// (a "." ends a string); takes more from above only while fewer than `capacity` characters wait.
struct Splitter: Layer {
    typealias Lower = Character
    typealias Upper = String
    typealias Failure = ToyError
    var capacity = Int.max
    var pendingDown: [Character] = []
    var assembling = ""
    var up: [String] = []
    var failOn: Character?

    mutating func receive(_ unit: Character, now: Instant) throws(ToyError) {
        if unit == failOn { throw ToyError(layer: "splitter") }
        if unit == "." {
            up.append(assembling)
            assembling = ""
        } else {
            assembling.append(unit)
        }
    }
    mutating func send(_ unit: String, now: Instant) { pendingDown += Array(unit) + ["."] }
    mutating func nextUp() -> String? { up.isEmpty ? nil : up.removeFirst() }
    mutating func nextDown(now: Instant) -> Character? { pendingDown.isEmpty ? nil : pendingDown.removeFirst() }
    mutating func handleTimers(now: Instant) {}
    var nextDeadline: Instant? { nil }
    var canSend: Bool { pendingDown.count < capacity }
}

/// Upper-cases strings both ways, answers every "ping" with "PONG" (output nobody above asked
/// for), and has a timer that emits "TICK".
struct Shouter: Layer {
    typealias Lower = String
    typealias Upper = String
    typealias Failure = ToyError
    var down: [String] = []
    var up: [String] = []
    var tickAt: Instant?

    mutating func receive(_ unit: String, now: Instant) {
        if unit == "ping" { down.append("PONG") } else { up.append(unit.uppercased()) }
    }
    mutating func send(_ unit: String, now: Instant) { down.append(unit.uppercased()) }
    mutating func nextUp() -> String? { up.isEmpty ? nil : up.removeFirst() }
    mutating func nextDown(now: Instant) -> String? { down.isEmpty ? nil : down.removeFirst() }
    mutating func handleTimers(now: Instant) throws(ToyError) {
        guard let tickAt, now >= tickAt else { return }
        self.tickAt = nil
        down.append("TICK")
    }
    var nextDeadline: Instant? { tickAt }
    var canSend: Bool { down.count < 2 }
}

private func drain(_ stack: inout LayerStack<Shouter, Splitter>) throws(ToyError) -> String {
    var out = ""
    while let c = try stack.nextDown(now: .zero) { out.append(c) }
    return out
}

@Test func unitsGoDownThroughEveryLayerInOrder() throws {
    var stack = Shouter().stacked(on: Splitter())
    try stack.send("ab", now: .zero)
    try stack.send("c", now: .zero)
    #expect(try drain(&stack) == "AB.C.")
}

@Test func unitsComeUpThroughEveryLayerAndAnswersGoDownAtOnce() throws {
    var stack = Shouter().stacked(on: Splitter())
    for c in "hi.ping.yo." { try stack.receive(c, now: .zero) }
    #expect(stack.nextUp() == "HI")
    #expect(stack.nextUp() == "YO")
    #expect(stack.nextUp() == nil)
    // The answer to "ping" was passed down while receiving: it is already in the bottom layer.
    #expect(stack.layer(Splitter.self)?.pendingDown == Array("PONG."))
    #expect(try drain(&stack) == "PONG.")
}

@Test func backPressureHoldsUnitsInTheUpperLayer() throws {
    var stack = Shouter().stacked(on: Splitter(capacity: 3))
    try stack.send("abcd", now: .zero)
    try stack.send("e", now: .zero)
    #expect(!stack.canSend, "the upper layer is full")
    try stack.passDown(now: .zero)
    #expect(stack.layer(Splitter.self)?.pendingDown == Array("ABCD."), "one unit went down, then the lower layer was full")
    #expect(stack.layer(Shouter.self)?.down == ["E"])
    #expect(try drain(&stack) == "ABCD.E.")
}

@Test func timersRunTopFirstAndTheirOutputGoesDown() throws {
    var stack = Shouter(tickAt: Instant(nanoseconds: 5)).stacked(on: Splitter())
    #expect(stack.nextDeadline == Instant(nanoseconds: 5))
    try stack.handleTimers(now: Instant(nanoseconds: 4))
    #expect(try drain(&stack) == "")
    try stack.handleTimers(now: Instant(nanoseconds: 5))
    #expect(try drain(&stack) == "TICK.")
    #expect(stack.nextDeadline == nil)
}

@Test func anErrorInAnyLayerStopsTheStackWithThatLayersCause() throws {
    var stack = Shouter().stacked(on: Splitter(failOn: "!"))
    try stack.receive("a", now: .zero)
    #expect(throws: ToyError(layer: "splitter")) { try stack.receive("!", now: .zero) }
}

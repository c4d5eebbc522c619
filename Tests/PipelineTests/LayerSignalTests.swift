import Pipeline
import Testing

/// Signals through a stack, and layers found by type.

enum Note: Equatable { case authenticated, resized(Int) }

/// Passes strings up; raises `.authenticated` when it receives `raisesOn`, answers `.authenticated` by
/// raising `.resized(answerSize)` if it has one, and keeps what it hears. `Place` only makes two
/// of them different types (a stack finds its layers by type).
struct Noter<Place>: Layer {
    typealias Lower = String
    typealias Upper = String
    typealias Failure = ToyError
    typealias Signal = Note
    var raisesOn: String?
    var answerSize: Int?
    var up: [String] = []
    var raising: [Note] = []
    var heard: [Note] = []
    var size = 8

    mutating func receive(_ unit: String, now: Instant) {
        if unit == raisesOn { raising.append(.authenticated) } else { up.append(unit) }
    }
    mutating func send(_ unit: String, now: Instant) {}
    mutating func nextUp() -> String? { up.isEmpty ? nil : up.removeFirst() }
    mutating func nextDown(now: Instant) -> String? { nil }
    mutating func handleTimers(now: Instant) {}
    var nextDeadline: Instant? { nil }
    var canSend: Bool { true }
    mutating func nextSignal() -> Note? { raising.isEmpty ? nil : raising.removeFirst() }
    mutating func handle(_ signal: Note) {
        heard.append(signal)
        if signal == .authenticated, let answerSize { raising.append(.resized(answerSize)) }
        if case .resized(let size) = signal { self.size = size }
    }
}

enum Middle {}
enum Bottom {}
/// The middle layer: raises `.authenticated` on "auth".
typealias Gate = Noter<Middle>
/// The bottom layer: answers `.authenticated` with `.resized(64)`.
typealias Wire = Noter<Bottom>

/// The top: keeps what comes up and what it hears.
struct Sink: Layer {
    typealias Lower = String
    typealias Upper = Never
    typealias Failure = ToyError
    typealias Signal = Note
    var received: [String] = []
    var heard: [Note] = []

    mutating func receive(_ unit: String, now: Instant) { received.append(unit) }
    mutating func nextDown(now: Instant) -> String? { nil }
    mutating func handleTimers(now: Instant) {}
    var nextDeadline: Instant? { nil }
    mutating func handle(_ signal: Note) { heard.append(signal) }
}

@Test func aSignalReachesEveryOtherLayerAndTheDriverOnce() throws {
    var stack = Sink().stacked(on: Gate(raisesOn: "auth")).stacked(on: Wire(answerSize: 64))
    try stack.receive("auth", now: .zero)
    // Gate raised `.authenticated`; Wire answered it with `.resized(64)`, which Gate and Sink heard.
    #expect(stack.layer(Gate.self)?.heard == [.resized(64)])
    #expect(stack.layer(Sink.self)?.heard == [.authenticated, .resized(64)])
    #expect(stack.layer(Wire.self)?.heard == [.authenticated])
    #expect(stack.layer(Wire.self)?.size == 8, "a layer does not hear its own signal")
    #expect(stack.drainSignals() == [.authenticated, .resized(64)])
    #expect(stack.nextSignal() == nil)
}

@Test func aSignalFromTheDriverReachesEveryLayer() {
    var stack = Sink().stacked(on: Gate(raisesOn: "auth")).stacked(on: Wire(answerSize: 64))
    stack.handle(.resized(20))
    #expect(stack.layer(Sink.self)?.heard == [.resized(20)])
    #expect(stack.layer(Gate.self)?.heard == [.resized(20)])
    #expect(stack.layer(Wire.self)?.size == 20)
    #expect(stack.drainSignals().isEmpty, "the driver's own signal does not come back to it")
}

@Test func layersAreFoundByTypeAndChangedInPlace() throws {
    var stack = Sink().stacked(on: Gate(raisesOn: "auth")).stacked(on: Wire(answerSize: 64))
    #expect(stack.layer(Splitter.self) == nil)
    #expect(stack.withLayer(Splitter.self) { _ in 1 } == nil)
    let size = stack.withLayer(Wire.self) { wire -> Int in
        wire.size = 99
        return wire.size
    }
    #expect(size == 99)
    #expect(stack.layer(Wire.self)?.size == 99)
    try stack.receive("data", now: .zero)
    #expect(stack.layer(Sink.self)?.received == ["data"])
    // A signal raised inside `withLayer` is routed when it returns.
    stack.withLayer(Gate.self) { $0.raising.append(.authenticated) }
    #expect(stack.layer(Wire.self)?.heard == [.authenticated])
}

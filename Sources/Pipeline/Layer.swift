/// The shape every layer of the stack shares: framing with its ARQ, the secure channel, the
/// transfer layer, and any layer added later.
///
/// A layer is sans-IO. Units come in from below (`receive`) and from above (`send`); time is
/// handed in. What the layer has for its neighbours is taken out: `nextUp` for the layer above,
/// `nextDown` for the layer below, each called again until it returns nil (so output that nobody
/// asked for, such as an acknowledgement or a retransmission, comes out the same way as an
/// answer). `handleTimers` runs at `nextDeadline`. `canSend` is back-pressure: the layer above
/// sends only while it is true, so memory stays bounded by the windows, not by the file.
///
/// Besides units, the layers of one stack tell each other things ("the peer authenticated", "a
/// person decides until T", "the datagram size changed"): a layer raises a `Signal` (taken with
/// `nextSignal`), and the stack hands it to every other layer (`handle`) and to whoever drives
/// the stack. A driver finds a layer by its type (`layer(_:)`, `withLayer(_:_:)`), never by its
/// place in the stack.
public protocol Layer {
    /// What this layer exchanges with the layer below it.
    associatedtype Lower
    /// What this layer exchanges with the layer above it (`Never` at the top of a stack).
    associatedtype Upper
    /// What every layer of one stack throws (each keeps its own cause inside, typed).
    associatedtype Failure: Error
    /// What the layers of one stack tell each other.
    associatedtype Signal = Never

    /// A unit from the layer below.
    mutating func receive(_ unit: Lower, now: Instant) throws(Failure)
    /// A unit from the layer above; only while `canSend`.
    mutating func send(_ unit: Upper, now: Instant) throws(Failure)
    /// The next unit for the layer above, or nil.
    mutating func nextUp() -> Upper?
    /// The next unit for the layer below, or nil: call again until nil.
    mutating func nextDown(now: Instant) throws(Failure) -> Lower?
    /// Runs whatever timers are due at `now`.
    mutating func handleTimers(now: Instant) throws(Failure)
    /// When `handleTimers` next has something to do, if ever.
    var nextDeadline: Instant? { get }
    /// Whether the layer takes more from above now.
    var canSend: Bool { get }

    /// The next signal this layer raises for the rest of its stack, or nil.
    mutating func nextSignal() -> Signal?
    /// A signal another layer of the stack (or its driver) raised.
    mutating func handle(_ signal: Signal)
    /// The layer of type `L` in this stack (a copy), if there is one.
    func layer<L: Layer>(_ type: L.Type) -> L?
    /// Runs `body` on the layer of type `L` in this stack, in place; nil if there is none.
    mutating func withLayer<L: Layer, Result, E: Error>(_ type: L.Type, _ body: (inout L) throws(E) -> Result) throws(E) -> Result?
}

extension Layer {
    /// A layer that raises nothing.
    @inlinable
    public mutating func nextSignal() -> Signal? { nil }

    /// A layer that needs to hear nothing.
    @inlinable
    public mutating func handle(_ signal: Signal) {}

    @inlinable
    public func layer<L: Layer>(_ type: L.Type) -> L? { self as? L }

    @inlinable
    public mutating func withLayer<L: Layer, Result, E: Error>(
        _ type: L.Type, _ body: (inout L) throws(E) -> Result
    ) throws(E) -> Result? {
        guard Self.self == L.self else { return nil }
        // Self is L: the layer is handed over in place, so its buffers are not copied on write.
        return try withUnsafeMutablePointer(to: &self) { pointer throws(E) in
            try body(&UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: L.self).pointee)
        }
    }
}

/// The layer at the top of a stack: nothing comes from above, nothing goes up.
extension Layer where Upper == Never {
    @inlinable
    public mutating func send(_ unit: Never, now: Instant) {}

    @inlinable
    public mutating func nextUp() -> Never? { nil }

    @inlinable
    public var canSend: Bool { false }
}

extension Layer {
    /// Puts `self` on top of `lower`. The compiler checks that the layers fit: what `self` hands
    /// down is what `lower` takes from above.
    @inlinable
    public func stacked<Below: Layer>(on lower: Below) -> LayerStack<Self, Below>
        where Below.Upper == Lower, Below.Failure == Failure, Below.Signal == Signal {
        LayerStack(top: self, bottom: lower)
    }
}

/// Two layers as one: `top` over `bottom`. Units move up after every `receive` and timer run,
/// and down whenever `top` has something and `bottom` can take it. After every step, a signal one
/// layer raised goes to the other and waits for whoever drives the stack (`nextSignal`).
///
/// The two layers are reached by type only (`layer(_:)`, `withLayer(_:_:)`): their place in the
/// stack is not part of its face.
@frozen
public struct LayerStack<Top: Layer, Bottom: Layer>: Layer
    where Top.Lower == Bottom.Upper, Top.Failure == Bottom.Failure, Top.Signal == Bottom.Signal {
    @usableFromInline internal var top: Top
    @usableFromInline internal var bottom: Bottom
    /// Signals raised inside, already handed to both layers, for the driver (or the stack above).
    @usableFromInline internal var raised: [Top.Signal] = []

    @inlinable
    public init(top: Top, bottom: Bottom) {
        self.top = top
        self.bottom = bottom
    }

    @inlinable
    public mutating func receive(_ unit: Bottom.Lower, now: Instant) throws(Top.Failure) {
        defer { routeSignals() }
        try bottom.receive(unit, now: now)
        try passUp(now: now)
    }

    @inlinable
    public mutating func send(_ unit: Top.Upper, now: Instant) throws(Top.Failure) {
        defer { routeSignals() }
        try top.send(unit, now: now)
    }

    @inlinable
    public mutating func nextUp() -> Top.Upper? { top.nextUp() }

    @inlinable
    public mutating func nextDown(now: Instant) throws(Top.Failure) -> Bottom.Lower? {
        defer { routeSignals() }
        try passDown(now: now)
        return try bottom.nextDown(now: now)
    }

    /// Top first, so that a layer's own deadline (a handshake) is reported before the one of the
    /// layer it rides on (the link's idle timeout) when both are due.
    @inlinable
    public mutating func handleTimers(now: Instant) throws(Top.Failure) {
        defer { routeSignals() }
        try top.handleTimers(now: now)
        try bottom.handleTimers(now: now)
        try passUp(now: now)
    }

    @inlinable
    public var nextDeadline: Instant? {
        switch (top.nextDeadline, bottom.nextDeadline) {
        case let (t?, b?): min(t, b)
        case let (t, b): t ?? b
        }
    }

    @inlinable
    public var canSend: Bool { top.canSend }

    /// Everything `bottom` has for `top`; after each unit, `top`'s answers go down at once, so an
    /// answer is in place before the next unit arrives (a handshake reply before the first record).
    @inlinable
    internal mutating func passUp(now: Instant) throws(Top.Failure) {
        while let unit = bottom.nextUp() {
            try top.receive(unit, now: now)
            try passDown(now: now)
        }
    }

    /// Moves down whatever `top` has, as far as `bottom` takes it, without taking anything out
    /// at the bottom (a driver does that with `nextDown`).
    @inlinable
    public mutating func passDown(now: Instant) throws(Top.Failure) {
        defer { routeSignals() }
        while bottom.canSend, let unit = try top.nextDown(now: now) {
            try bottom.send(unit, now: now)
        }
    }

    // MARK: - Signals and layers by type

    @inlinable
    public mutating func nextSignal() -> Top.Signal? {
        routeSignals()
        return raised.isEmpty ? nil : raised.removeFirst()
    }

    @inlinable
    public mutating func handle(_ signal: Top.Signal) {
        top.handle(signal)
        bottom.handle(signal)
        routeSignals()
    }

    @inlinable
    public func layer<L: Layer>(_ type: L.Type) -> L? {
        top.layer(type) ?? bottom.layer(type)
    }

    /// Every signal the stack holds for its driver, taken.
    @inlinable
    public mutating func drainSignals() -> [Top.Signal] {
        routeSignals()
        defer { raised.removeAll() }
        return raised
    }

    @inlinable
    public mutating func withLayer<L: Layer, Result, E: Error>(
        _ type: L.Type, _ body: (inout L) throws(E) -> Result
    ) throws(E) -> Result? {
        defer { routeSignals() }
        if let result = try top.withLayer(type, body) { return result }
        return try bottom.withLayer(type, body)
    }

    /// Hands what each layer raised to the other, until neither raises more (handling a signal
    /// may raise another).
    @inlinable
    internal mutating func routeSignals() {
        while true {
            if let signal = top.nextSignal() {
                bottom.handle(signal)
                raised.append(signal)
            } else if let signal = bottom.nextSignal() {
                top.handle(signal)
                raised.append(signal)
            } else {
                return
            }
        }
    }
}

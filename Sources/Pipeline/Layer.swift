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
/// `Codec` (a pure per-unit transform) is what a layer may use inside; `Layer` is what stacks.
public protocol Layer {
    /// What this layer exchanges with the layer below it.
    associatedtype Lower
    /// What this layer exchanges with the layer above it.
    associatedtype Upper
    /// What every layer of one stack throws (each keeps its own cause inside, typed).
    associatedtype Failure: Error

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
}

extension Layer {
    /// Puts `self` on top of `lower`. The compiler checks that the layers fit: what `self` hands
    /// down is what `lower` takes from above.
    @inlinable
    public func stacked<Below: Layer>(on lower: Below) -> LayerStack<Self, Below>
        where Below.Upper == Lower, Below.Failure == Failure {
        LayerStack(top: self, bottom: lower)
    }
}

/// Two layers as one: `top` over `bottom`. Units move up after every `receive` and timer run,
/// and down whenever `top` has something and `bottom` can take it.
@frozen
public struct LayerStack<Top: Layer, Bottom: Layer>: Layer
    where Top.Lower == Bottom.Upper, Top.Failure == Bottom.Failure {
    public var top: Top
    public var bottom: Bottom

    public init(top: Top, bottom: Bottom) {
        self.top = top
        self.bottom = bottom
    }

    @inlinable
    public mutating func receive(_ unit: Bottom.Lower, now: Instant) throws(Top.Failure) {
        try bottom.receive(unit, now: now)
        try passUp(now: now)
    }

    @inlinable
    public mutating func send(_ unit: Top.Upper, now: Instant) throws(Top.Failure) {
        try top.send(unit, now: now)
    }

    @inlinable
    public mutating func nextUp() -> Top.Upper? { top.nextUp() }

    @inlinable
    public mutating func nextDown(now: Instant) throws(Top.Failure) -> Bottom.Lower? {
        try passDown(now: now)
        return try bottom.nextDown(now: now)
    }

    /// Top first, so that a layer's own deadline (a handshake) is reported before the one of the
    /// layer it rides on (the link's idle timeout) when both are due.
    @inlinable
    public mutating func handleTimers(now: Instant) throws(Top.Failure) {
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
    @usableFromInline
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
        while bottom.canSend, let unit = try top.nextDown(now: now) {
            try bottom.send(unit, now: now)
        }
    }
}

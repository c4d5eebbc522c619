/// The shape every layer of the stack shares.
///
/// A codec turns one unit from the layer above into zero or more units for the layer below
/// (`encode`), and one unit from below into zero or more units for the layer above (`decode`).
/// Codecs are pure: no sockets, files or clocks. They append to caller-owned arrays so that the
/// hot path can reuse storage instead of allocating per unit.
public protocol Codec {
    /// What the layer above hands down (and gets back up).
    associatedtype Upper
    /// What this layer hands to the layer below (and gets back from it).
    associatedtype Lower

    mutating func encode(_ unit: Upper, into output: inout [Lower]) throws
    mutating func decode(_ unit: Lower, into output: inout [Upper]) throws
}

extension Codec {
    /// Puts `self` on top of `lower`. The compiler checks that the layers fit:
    /// what `self` emits downward is what `lower` takes from above.
    public func stacked<Below: Codec>(on lower: Below) -> Stacked<Self, Below> where Below.Upper == Lower {
        Stacked(top: self, bottom: lower)
    }
}

/// Two codecs composed into one: `top` over `bottom`.
public struct Stacked<Top: Codec, Bottom: Codec>: Codec where Top.Lower == Bottom.Upper {
    public var top: Top
    public var bottom: Bottom
    private var middle: [Top.Lower] = []

    public init(top: Top, bottom: Bottom) {
        self.top = top
        self.bottom = bottom
    }

    public mutating func encode(_ unit: Top.Upper, into output: inout [Bottom.Lower]) throws {
        middle.removeAll(keepingCapacity: true)
        try top.encode(unit, into: &middle)
        for piece in middle { try bottom.encode(piece, into: &output) }
    }

    public mutating func decode(_ unit: Bottom.Lower, into output: inout [Top.Upper]) throws {
        middle.removeAll(keepingCapacity: true)
        try bottom.decode(unit, into: &middle)
        for piece in middle { try top.decode(piece, into: &output) }
    }
}

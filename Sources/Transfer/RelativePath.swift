/// A path inside a sent folder, as the receiver stores it: the folder's own name first, then one
/// component per level, each already reduced by the name policy (`safeFileName`). The rules are
/// in docs/protocol.md §8.4, Paths; a path breaking any of them is refused whole, never cut or repaired.
///
/// Equality compares bytes, as file systems do: Swift's `String ==` would call an NFC name and
/// its NFD twin equal, but they are two different names on disk, and both are kept as sent.
public struct RelativePath: Hashable, Sendable, CustomStringConvertible {
    /// The reduced components; never empty, each one a safe base name.
    public let components: [String]

    /// Parses a path as it arrives from the wire (receiver side). Checks the rules in order and
    /// throws the first one broken.
    public init(wire bytes: some Collection<UInt8>) throws(RelativePathError) {
        guard !bytes.isEmpty else { throw .empty }
        guard bytes.count <= TransferConstants.maxPathLength else { throw .tooLong }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .notUTF8 }
        guard !text.utf8.starts(with: [UInt8(ascii: "/")]) else { throw .absolute }
        let parts = text.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        guard parts.count <= TransferConstants.maxPathDepth else { throw .tooDeep }
        var components: [String] = []
        components.reserveCapacity(parts.count)
        for part in parts {
            components.append(try Self.reduce(component: Substring(part)))
        }
        self.components = components
    }

    /// The wire bytes for a path made of local names (sender side): the names joined with `/`,
    /// checked against the same rules the receiver applies, so that whatever a sender offers is
    /// accepted. Nothing is cut or replaced: a name the receiver would refuse is an error here.
    public static func wire(components: [String]) throws(RelativePathError) -> [UInt8] {
        guard !components.isEmpty else { throw .empty }
        guard !components.contains(where: { $0.utf8.contains(UInt8(ascii: "/")) }) else { throw .separator }
        let bytes = Array(components.joined(separator: "/").utf8)
        _ = try RelativePath(wire: bytes)
        return bytes
    }

    /// The components joined with `/`, for logs and messages.
    public var description: String { components.joined(separator: "/") }

    public static func == (lhs: RelativePath, rhs: RelativePath) -> Bool {
        lhs.components.elementsEqual(rhs.components) { $0.utf8.elementsEqual($1.utf8) }
    }

    public func hash(into hasher: inout Hasher) {
        for component in components {
            hasher.combine(component.utf8.count)
            for byte in component.utf8 { hasher.combine(byte) }
        }
    }

    /// One component: refused if it breaks a rule, else reduced by the single-file name policy.
    /// The policy can only replace or strip code points here (`/` and `\` are gone, the length is
    /// within its limit), so what it returns is the name the receiver stores.
    private static func reduce(component: Substring) throws(RelativePathError) -> String {
        guard !component.isEmpty else { throw .emptyComponent }
        guard component != ".", component != ".." else { throw .dotComponent }
        guard !component.utf8.contains(UInt8(ascii: "\\")) else { throw .separator }
        guard !component.unicodeScalars.contains(where: isControl) else { throw .controlCharacter }
        guard component.utf8.count <= TransferConstants.maxNameLength else { throw .componentTooLong }
        guard let reduced = safeFileName(String(component)) else { throw .unusableComponent }
        return reduced
    }

    /// C0 controls, DEL and C1 controls.
    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }
}

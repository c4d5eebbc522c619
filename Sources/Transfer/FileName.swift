/// Reduces a file name from a peer to a safe base name.
///
/// The result has no `/`, no `\`, no NUL or other control characters, is not `.` or `..`, does
/// not start with `.` (so nothing hidden appears), and is at most `maxNameLength` UTF-8 bytes,
/// cut at a character boundary. Returns `nil` when nothing usable is left.
public func safeFileName(_ proposed: String) -> String? {
    // Keep only the last path component, whichever separator the peer used.
    let lastComponent = proposed.split(omittingEmptySubsequences: true) { $0 == "/" || $0 == "\\" }.last.map(String.init) ?? ""
    var cleaned = String.UnicodeScalarView()
    for scalar in lastComponent.unicodeScalars {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .unassigned, .surrogate, .privateUse:
            cleaned.append("_")
        default:
            cleaned.append(scalar)
        }
    }
    // Strip whitespace and leading dots until neither is left (". .x" must not become ".x"),
    // by code point: a dot followed by a combining mark is one Character, but still a dot.
    var name = String(cleaned)
    while true {
        var scalars = Substring(name.trimmingWhitespace()).unicodeScalars
        while scalars.first == "." { scalars.removeFirst() }
        let next = String(scalars)
        if next == name { break }
        name = next
    }
    guard !name.isEmpty else { return nil }
    // Cut to the byte limit without splitting a character.
    while name.utf8.count > TransferConstants.maxNameLength { name.removeLast() }
    return name.isEmpty ? nil : name
}

extension String {
    func trimmingWhitespace() -> String {
        var scalars = Substring(self)
        while let first = scalars.first, first.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }
}

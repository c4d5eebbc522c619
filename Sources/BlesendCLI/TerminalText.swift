/// Text that came from a peer (names, reasons) or from anywhere else, made safe to print.
///
/// A receiver chooses the stored name it reports, and a sender chooses the name it offers: either
/// could carry ESC sequences (clear the screen, move the cursor, fake a line), CR, BEL, or
/// bidirectional overrides that show a name other than the real one. Every line the tools print
/// for people goes through `sanitized`, which shows such characters as visible escapes instead.
enum TerminalText {
    /// Whether `scalar` could change how the terminal shows what follows: C0 and C1 controls,
    /// DEL, format characters (bidi overrides, zero-width joiners), line and paragraph separators.
    static func isHazardous(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator: true
        default: false
        }
    }

    /// `text` with every hazardous character replaced by a visible escape: `\e` for ESC, `\r`,
    /// `\n`, `\t`, and `\u{XXXX}` for the rest.
    static func sanitized(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isHazardous) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            guard isHazardous(scalar) else {
                out.append(scalar)
                continue
            }
            let escape = switch scalar {
            case "\u{1B}": "\\e"
            case "\r": "\\r"
            case "\n": "\\n"
            case "\t": "\\t"
            default: "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            }
            out.append(contentsOf: escape.unicodeScalars)
        }
        return String(out)
    }
}

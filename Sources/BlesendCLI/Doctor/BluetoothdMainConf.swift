/// bluetoothd's `/etc/bluetooth/main.conf`, read as GLib's key-file parser reads it (bluetoothd
/// loads the file with `g_key_file_load_from_file`): `[Section]` lines, `key = value` lines, blank
/// lines and whole-line `#` comments, leading spaces ignored. A `#` after a value is part of the
/// value, as it is for GLib. Sections and keys are case-sensitive; a key given twice keeps the
/// later value; unknown keys are kept (bluetoothd ignores them).
struct BluetoothdMainConf: Sendable, Equatable {
    /// Section name -> key -> value (spaces around it removed).
    private(set) var sections: [String: [String: String]] = [:]
    /// The 1-based numbers of the lines GLib rejects: neither a section, `key = value`, a comment
    /// nor blank, or a key before any section. One such line makes GLib reject the whole file,
    /// and bluetoothd then runs on its defaults.
    private(set) var malformedLines: [Int] = []

    /// The most of the file that is read; the stock file is about 12 KiB.
    static let sizeLimit = 256 * 1024

    init(parsing text: String) {
        var section: String?
        // "\r\n" is one Character to Swift, so it is a separator of its own.
        let lines = text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" }
        for (index, raw) in lines.enumerated() {
            let line = raw.drop { $0 == " " || $0 == "\t" || $0 == "\r" }
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("[") {
                if let name = Self.sectionName(line) {
                    section = name
                    sections[name, default: [:]] = sections[name, default: [:]]
                } else {
                    malformedLines.append(index + 1)
                }
                continue
            }
            guard let section, let equals = line.firstIndex(of: "=") else {
                malformedLines.append(index + 1)
                continue
            }
            let key = Self.trimmed(line[..<equals])
            guard !key.isEmpty else {
                malformedLines.append(index + 1)
                continue
            }
            sections[section, default: [:]][key] = Self.trimmed(line[line.index(after: equals)...])
        }
    }

    /// The value of `key` in `[section]`, or nil when not set.
    func value(_ section: String, _ key: String) -> String? { sections[section]?[key] }

    /// `[Name]` followed by nothing but spaces gives "Name"; anything else is not a section line.
    private static func sectionName(_ line: Substring) -> String? {
        guard let close = line.firstIndex(of: "]") else { return nil }
        let name = line[line.index(after: line.startIndex)..<close]
        let rest = line[line.index(after: close)...]
        guard !name.isEmpty, !name.contains("["), rest.allSatisfy({ $0 == " " || $0 == "\t" || $0 == "\r" }) else { return nil }
        return String(name)
    }

    private static func trimmed(_ text: Substring) -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        return String(text.drop(while: isSpace).reversed().drop(while: isSpace).reversed())
    }
}

#if canImport(Glibc)
import Glibc
#endif
import Keys

/// Where the named key directories live unless an option says otherwise, in one place:
///
/// - the receiver's trust directory: `$XDG_CONFIG_HOME/blesend/trusted`, else
///   `~/.config/blesend/trusted`; as root (effective uid 0) `/etc/blesend/trusted`, the one the
///   package makes and blerecv.service reads;
/// - the sender's address book of receivers: `$XDG_CONFIG_HOME/blesend/receivers`, else
///   `~/.config/blesend/receivers`.
enum KeyDirectoryLocation {
    /// root's trust directory (packaging/postinst makes it; blerecv.service passes it with --trust).
    static let systemTrust = "/etc/blesend/trusted"

    /// The rule, for `--help`.
    static let trustRule = "$XDG_CONFIG_HOME/blesend/trusted or ~/.config/blesend/trusted; as root /etc/blesend/trusted"
    static let receiversRule = "$XDG_CONFIG_HOME/blesend/receivers or ~/.config/blesend/receivers"

    static func defaultTrust(euid: uid_t = geteuid(), configDirectory: String = KeyLocation.defaultDirectory) -> String {
        euid == 0 ? systemTrust : configDirectory + "/trusted"
    }

    static var defaultReceivers: String { KeyLocation.defaultDirectory + "/receivers" }

    /// The trust directory `--trust` names, else the default one; hints name a given one again.
    static func trust(_ given: String?) -> NamedKeyDirectory {
        let standard = defaultTrust()
        guard let given, given != standard else { return .trust(at: standard) }
        return .trust(at: given, directoryOption: " --trust \(shellWord(given))")
    }

    static func receivers() -> NamedKeyDirectory { .receiverBook(at: defaultReceivers) }

    /// `text` as one shell word, quoted only when it must be.
    static func shellWord(_ text: String) -> String {
        let plain = !text.isEmpty && text.unicodeScalars.allSatisfy { scalar in
            scalar.properties.isAlphabetic || scalar.properties.numericType != nil || "-_./+,:=@%".unicodeScalars.contains(scalar)
        }
        return plain ? text : "'" + text.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
    }
}

/// The man pages' ENVIRONMENT, FILES and EXIT STATUS sections, built from the code's own tables
/// (ExitStatus, the key and state locations), so that the pages cannot drift from the programs.
/// scripts/man.sh puts them in docs/man after generate-manual; a test regenerates them and
/// compares.
public enum ManualSections {
    /// Which of the two programs an entry concerns.
    public enum Tool: String, Sendable {
        case blesend, blerecv
    }

    struct Entry: Sendable {
        var name: String
        var text: String
        var tools: Set<Tool> = [.blesend, .blerecv]
    }

    /// The environment variables the programs read (KeyLocation, StateLocation, BlueZ's bus).
    static let environment: [Entry] = [
        Entry(name: "XDG_CONFIG_HOME", text: "Where the key and the key directories live: $XDG_CONFIG_HOME/blesend (default ~/.config/blesend)."),
        Entry(name: "XDG_STATE_HOME", text: "Where the state folder lives when --state is not given: $XDG_STATE_HOME/blesend (default ~/.local/state/blesend)."),
        Entry(name: "STATE_DIRECTORY", text: "Set by systemd (StateDirectory=): its first folder is the state folder, before XDG_STATE_HOME."),
        Entry(name: "HOME", text: "The base of the default folders when the XDG variables are unset."),
        Entry(name: "DBUS_SYSTEM_BUS_ADDRESS", text: "The system bus to reach bluetoothd on (default unix:path=/run/dbus/system_bus_socket)."),
        Entry(name: "BLERECV_OPTIONS", text: "Read by blerecv.service from /etc/default/blerecv: options added to the service's command line.", tools: [.blerecv]),
    ]

    /// The files and folders the programs read and write.
    static let files: [Entry] = [
        Entry(name: "$XDG_CONFIG_HOME/blesend/id", text: "Your secret key (mode 0600), and id.pub its public key; keygen writes them, pair makes them if missing. --key names another."),
        Entry(name: "$XDG_CONFIG_HOME/blesend/receivers/", text: "The receivers you pinned, NAME.pub each (blesend pair, blesend receivers add); blesend --to NAME reads them.",
              tools: [.blesend]),
        Entry(name: "$XDG_CONFIG_HOME/blesend/trusted/", text: "The senders you trust, NAME.pub each (blerecv pair, blerecv trust add); --trust names another.",
              tools: [.blerecv]),
        Entry(name: KeyDirectoryLocation.systemTrust + "/", text: "The trust directory when run as root, and the service's.", tools: [.blerecv]),
        Entry(name: "$XDG_STATE_HOME/blesend/", text: "The state folder (--state): blesend keeps its history and the transfer ids of files not yet saved there, blerecv its replay guard, history and completed transfers. /var/lib/blesend for the service."),
        Entry(name: AdapterLock.folder + "/blesend-ADAPTER.lock", text: "Held while blesend sends from that adapter: a second run waits for it.", tools: [.blesend]),
        Entry(name: "/etc/default/blerecv", text: "The service's options (BLERECV_OPTIONS).", tools: [.blerecv]),
    ]

    /// The three sections, in mdoc, for `tool`'s page.
    public static func mdoc(tool: Tool) -> String {
        var lines: [String] = []
        func section(_ title: String, _ entries: [(String, String)], width: String) {
            lines += [".Sh \(title)", ".Bl -tag -width \(width)"]
            for (name, text) in entries { lines += [".It \(name)", escaped(text)] }
            lines.append(".El")
        }
        section("ENVIRONMENT", environment.filter { $0.tools.contains(tool) }.map { ("Ev \($0.name)", $0.text) }, width: "Ds")
        section("FILES", files.filter { $0.tools.contains(tool) }.map { ("Pa \($0.name)", $0.text) }, width: "Ds")
        section("\"EXIT STATUS\"", ExitStatus.allCases.map { ("\($0.rawValue)", "\($0.summary): \($0.documentation)") }, width: "4n")
        return lines.joined(separator: "\n") + "\n"
    }

    /// Text as an mdoc text line: backslashes as \e, a leading dot or quote guarded, anything
    /// outside ASCII as a groff escape (\[u2713] for ✓), which groff and mandoc both render.
    public static func escaped(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\e"
            case _ where scalar.isASCII: out.unicodeScalars.append(scalar)
            default:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                out += "\\[u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + "]"
            }
        }
        if out.hasPrefix(".") || out.hasPrefix("'") { out = "\\&" + out }
        return out
    }
}

import Discovery
import Keys

/// How `blesend scan` shows its rows: a table for people, or one `nearby` event per row
/// (docs/json-events.md).
extension ScanRow {
    static let tableHeader = "RSSI  MODE     ADDRESS            TYPE    RECEIVER"

    /// ` -61  private  C0:FF:EE:00:11:22  random  alice [0c5f 40b9 …], lists you`.
    var tableLine: String {
        let strength = rssi.map { String($0) } ?? "?"
        let type = TerminalText.sanitized(addressType ?? "?")
        return String(repeating: " ", count: max(0, 4 - strength.count)) + strength
            + "  " + mode.word.padding(7) + "  " + TerminalText.sanitized(address).padding(17) + "  " + type.padding(6)
            + "  " + TerminalText.sanitized(receiver)
    }

    /// What the RECEIVER column says.
    var receiver: String {
        switch mode {
        case .pairing(let name): (name.map { "\"\($0)\"" } ?? "(no name)") + " (its own name for itself: blesend pair)"
        case .privateDiscovery(.pinned(let peer)): "\(peer.name) [\(peer.key.fingerprint)], lists you"
        case .privateDiscovery(.nobodyWeKnow): "lists none of your pinned receivers with your key"
        case .privateDiscovery(.unchecked): "(no key of yours to match it with)"
        case .plain: "(only a connection tells whose)"
        }
    }

    var json: JSONLine {
        var name: String?
        var fingerprint: String?
        var yours: Bool?
        switch mode {
        case .pairing(let advertised): name = advertised
        case .privateDiscovery(.pinned(let peer)):
            (name, fingerprint, yours) = (peer.name, peer.key.fingerprint, true)
        case .privateDiscovery(.nobodyWeKnow): yours = false
        case .privateDiscovery(.unchecked), .plain: break
        }
        return JSONLine("nearby", [
            ("device", .string(device)), ("address", .string(address)), ("address_type", .of(addressType)),
            ("rssi", rssi.map { .int(Int64($0)) } ?? .null), ("mode", .string(mode.word)), ("name", .of(name)),
            ("fingerprint", .of(fingerprint)), ("yours", yours.map { .bool($0) } ?? .null),
        ])
    }
}

#if canImport(Glibc)
import Glibc
#endif
import BlueZ

/// What the machine gives away to anyone in range, and the clock the handshake depends on:
/// the adapter's name, its address privacy, and whether the system clock is synchronised.
extension DoctorJudge {
    /// The adapter's GAP Device Name (`Adapter1.Alias`, which is `Adapter1.Name` until an alias is
    /// set: main.conf's `Name`, or bluetoothd's hostname plugin's pretty host name). Anyone who
    /// connects reads it, with no pairing, and a receiver accepts every connection: a warning when
    /// it names this machine or its user.
    static func deviceNameCheck(_ adapter: AdapterStatus, hostname: String?, userName: String?) -> DoctorCheck {
        guard let name = adapter.alias ?? adapter.systemName else {
            return .warn(.deviceName, "bluetoothd does not say what \(adapter.name) is called (no Adapter1.Alias)")
        }
        if let reason = revealingName(name, hostname: hostname, userName: userName) {
            return .warn(.deviceName,
                         "\"\(name)\" (\(reason)): anyone in range who connects to \(adapter.name) reads it, no pairing needed",
                         fix: SetupFix.neutralName)
        }
        return .ok(.deviceName, "\"\(name)\" (anyone who connects reads it; it names neither this machine nor you)")
    }

    /// Why `name` gives something away, or nil for a neutral one: bluetoothd's default ("BlueZ",
    /// "BlueZ 5.66"), or a name that contains neither the host name (its first label), nor the
    /// login name, nor a possessive ("Alice's laptop"). Letters and digits are compared, case aside.
    static func revealingName(_ name: String, hostname: String?, userName: String?) -> String? {
        let plain = letters(name)
        if plain.isEmpty || isBlueZDefault(name) { return nil }
        if let hostname, let label = hostname.split(separator: ".").first {
            let host = letters(String(label))
            if host.count >= 3 && (plain.contains(host) || (plain.count >= 3 && host.contains(plain))) { return "the host name" }
        }
        if let userName, userName != "root" {
            let user = letters(userName)
            if user.count >= 3 && plain.contains(user) { return "your login name" }
        }
        if name.lowercased().contains("'s") || name.lowercased().contains("\u{2019}s") { return "a person's name" }
        return nil
    }

    private static func letters(_ text: String) -> String {
        String(text.lowercased().filter { $0.isLetter || $0.isNumber })
    }

    private static func isBlueZDefault(_ name: String) -> Bool {
        let parts = name.split(separator: " ")
        guard parts.first == "BlueZ" else { return false }
        return parts.count == 1 || (parts.count == 2 && parts[1].allSatisfy { $0.isNumber || $0 == "." })
    }

    /// Whether the receiver's advertisements carry a fixed address (`AddressPrivacy`, the kernel's
    /// setting). A receiver works either way, so this only warns; `blerecv --private-discovery`
    /// refuses to start without it (exit 78).
    static func addressPrivacyCheck(_ adapter: AdapterStatus, _ privacy: AddressPrivacy?) -> DoctorCheck {
        let fixed = adapter.address.map { " \($0)" } ?? ""
        switch privacy {
        case .on?:
            return .ok(.addressPrivacy, "\(adapter.name) advertises from resolvable private addresses (LE privacy on)")
        case .off?:
            let type = adapter.addressType.map { " (\($0))" } ?? ""
            return .warn(.addressPrivacy,
                         "\(adapter.name) advertises from its fixed address\(fixed)\(type): anyone can follow this receiver, "
                             + "and blerecv --private-discovery refuses to start (exit 78)",
                         fix: PrivateDiscoveryGate.enablePrivacy)
        case .unknown(let reason)?:
            return .warn(.addressPrivacy,
                         "cannot tell whether \(adapter.name) uses private addresses (\(reason)); blerecv --private-discovery refuses to start (exit 78)",
                         fix: "look for privacy in current settings: btmgmt info; to turn it on, \(PrivateDiscoveryGate.enablePrivacy)")
        case nil:
            return .warn(.addressPrivacy, "not asked: the kernel's privacy setting for \(adapter.name) was not read")
        }
    }

    /// The handshake carries the sender's clock, and a receiver refuses a sender more than 10
    /// minutes ahead of its own clock (`clockAhead`): an unsynchronised clock on either side
    /// (a Raspberry Pi has no battery-backed clock) ends in refusals.
    static func clockCheck(_ clock: ClockSync?) -> DoctorCheck {
        switch clock {
        case .synchronised?:
            return .ok(.clock, "synchronised (the kernel's clock discipline, adjtimex)")
        case .unsynchronised?:
            return .warn(.clock,
                         "not synchronised (adjtimex: STA_UNSYNC): a receiver more than 10 minutes behind its senders refuses "
                             + "them (their clock is ahead), and a sender ahead of its receiver is refused",
                         fix: SetupFix.synchroniseClock)
        case .unknown(let errno)?:
            return .warn(.clock, "cannot tell whether the clock is synchronised (adjtimex: \(String(cString: strerror(errno))))",
                         fix: SetupFix.synchroniseClock)
        case nil:
            return .warn(.clock, "not asked")
        }
    }
}

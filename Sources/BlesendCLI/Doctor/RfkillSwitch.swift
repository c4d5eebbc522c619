/// One rfkill switch (`/sys/class/rfkill/rfkillN`): a radio's kill switch. Soft-blocked is the
/// software's doing (`rfkill block`, a desktop's airplane mode); hard-blocked is a hardware switch
/// or the firmware, which no command undoes.
struct RfkillSwitch: Sendable, Equatable {
    /// "hci0" for an adapter's own switch, or a platform switch's name ("tpacpi_bluetooth_sw").
    var name: String
    /// "bluetooth", "wlan", …
    var type: String
    var softBlocked: Bool
    var hardBlocked: Bool

    var isBlocked: Bool { softBlocked || hardBlocked }

    /// Whether this switch can keep `adapter` (nil: whichever) off: the adapter's own switch, and
    /// the Bluetooth switches of the platform (not named after another adapter), which cut the
    /// Bluetooth radios of the machine.
    func governs(adapter: String?) -> Bool {
        guard type == "bluetooth" else { return false }
        guard let adapter, name.hasPrefix("hci") else { return true }
        return name == adapter
    }
}

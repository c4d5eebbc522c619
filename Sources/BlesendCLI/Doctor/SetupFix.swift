import BlueZ

/// The commands and settings that fix a Bluetooth set-up, worded once: `doctor` gives them for
/// its failed checks, and the transfer commands' hints use the same words.
enum SetupFix {
    static let startSystemBus = "sudo systemctl start dbus"
    static let installBlueZ = "sudo apt-get install bluez"
    static let startBluetoothd = "sudo systemctl start bluetooth"
    static let restartBluetoothd = "sudo systemctl restart bluetooth"
    static let joinBluetoothGroup =
        "run as root or add yourself to the bluetooth group: sudo usermod -aG bluetooth $USER, then log in again"
    static let connectAdapter = "connect a Bluetooth 4.0 or later (LE) adapter, or load its driver; bluetoothctl list then shows it"
    static let softUnblock = "rfkill unblock bluetooth"
    static let hardUnblock = "a hardware switch (or the firmware) blocks Bluetooth: turn it on with the machine's switch or key, or in the firmware settings"
    static let leAdapter = "use a Bluetooth 4.0 or later (LE) adapter (--adapter hciN picks another)"
    static let advertisingAdapter = "use an adapter that can advertise: --adapter hciN, or a Bluetooth 4.0 or later (LE) adapter"
    /// The alias outlives restarts and wins over main.conf's `Name` (and the host name bluetoothd
    /// takes when neither is set).
    static let neutralName =
        "give it a neutral name: bluetoothctl system-alias blesend (kept across restarts); main.conf's Name = blesend under [General] only sets the default an alias overrides"
    static let synchroniseClock =
        "turn on time synchronisation: sudo timedatectl set-ntp true (systemd-timesyncd), or install chrony"

    /// Powers `adapter` on: `bluetoothctl power on` acts on bluetoothctl's default adapter, so it is
    /// named only when there is no other; otherwise the property is set through bluetoothd directly.
    static func powerOn(_ adapter: AdapterStatus, onlyAdapter: Bool) -> String {
        onlyAdapter
            ? "bluetoothctl power on"
            : "busctl --system set-property org.bluez \(adapter.path) org.bluez.Adapter1 Powered b true"
    }

    /// Changing main.conf takes a bluetoothd restart.
    static func editMainConf(_ change: String, path: String) -> String {
        "\(change) in \(path), then: \(restartBluetoothd)"
    }
}

import BlueZ

/// Everything `doctor` judges, as plain values: what the bus and bluetoothd said, and what this
/// machine's files and kernel say. `DoctorFacts.gather` reads them from the system; tests write
/// them by hand.
struct DoctorFacts: Sendable, Equatable {
    var survey: BluetoothdSurvey
    /// Whether the bus address came from `DBUS_SYSTEM_BUS_ADDRESS` (else it is the default socket).
    var busAddressFromEnvironment = false
    /// The first bluetoothd binary that answered `--version`; nil when none did.
    var installedBluetoothd: InstalledBluetoothd?
    /// The switches in `/sys/class/rfkill`; nil when that folder cannot be read (a kernel without
    /// rfkill, or a container without `/sys/class`).
    var rfkill: [RfkillSwitch]?
    var mainConf: MainConfFile
    /// `uname -r`; nil when uname failed.
    var kernel: KernelRelease?
    /// Each adapter's address privacy as the kernel reports it, by name ("hci0").
    var addressPrivacy: [String: AddressPrivacy] = [:]
    /// This machine's host name and the user's login name, to tell whether the adapter's name gives
    /// them away (nil when unknown).
    var hostname: String?
    var userName: String?
    /// Whether the system clock is synchronised; nil when not looked at.
    var clock: ClockSync?
}

/// What the kernel's clock discipline says about the system clock (`adjtimex`): NTP daemons
/// (systemd-timesyncd, chrony, ntpd) clear `STA_UNSYNC` once they have set the clock.
enum ClockSync: Sendable, Equatable {
    case synchronised
    case unsynchronised
    /// adjtimex failed (a sandbox that forbids it), with this errno.
    case unknown(errno: Int32)
}

/// A bluetoothd binary and the version it printed for `--version` (that of the installed file,
/// which is the running daemon's unless BlueZ was upgraded without restarting it).
struct InstalledBluetoothd: Sendable, Equatable {
    var path: String
    var version: String
}

/// What became of reading `main.conf`.
enum MainConfFile: Sendable, Equatable {
    /// No such file: bluetoothd runs on its defaults.
    case absent(path: String)
    /// It is there but could not be read (permissions, too large); `reason` says why.
    case unreadable(path: String, reason: SmallFile.Problem)
    case read(path: String, BluetoothdMainConf)

    var path: String {
        switch self {
        case .absent(let path), .unreadable(let path, _), .read(let path, _): path
        }
    }
}

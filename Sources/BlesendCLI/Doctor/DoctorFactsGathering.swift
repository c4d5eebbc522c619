#if canImport(Glibc)
import Glibc
#endif
import BlueZ
import CClockCalls

/// Where `doctor` looks; `system` is this machine, tests point it elsewhere.
struct DoctorSources: Sendable {
    /// Nil: the system bus (`DBUS_SYSTEM_BUS_ADDRESS`, or the default socket).
    var busAddress: String?
    var mainConf = "/etc/bluetooth/main.conf"
    var rfkill = "/sys/class/rfkill"
    /// Tried in order until one prints a version; absolute paths only (`PATH` is never searched:
    /// whoever sets it must not choose what `doctor` runs). Debian and Ubuntu install bluetoothd
    /// in /usr/libexec/bluetooth (older releases /usr/lib/bluetooth), Fedora and Arch in /usr/libexec
    /// or /usr/lib, some distributions in /usr/sbin.
    var bluetoothdBinaries = ["/usr/libexec/bluetooth/bluetoothd", "/usr/lib/bluetooth/bluetoothd", "/usr/sbin/bluetoothd"]
    var versionTimeout: Duration = .seconds(2)
    /// The kernel's address privacy for an adapter ("hci0").
    var addressPrivacy: @Sendable (String) -> AddressPrivacy = { AddressPrivacy.kernelSetting(adapter: $0) }
    /// Whether the system clock is synchronised.
    var clock: @Sendable () -> ClockSync = { DoctorFacts.clockSync() }

    static let system = DoctorSources()
}

/// The edge: reads the facts from the system. Nothing is changed; the D-Bus part is
/// `BluetoothdSurvey`'s, and the rest is files, `uname` and `bluetoothd --version`.
extension DoctorFacts {
    static func gather(_ sources: DoctorSources) async -> DoctorFacts {
        let survey = await BluetoothdSurvey.take(busAddress: sources.busAddress)
        var privacy: [String: AddressPrivacy] = [:]
        if case .success(let adapters)? = survey.adapters {
            for adapter in adapters { privacy[adapter.name] = sources.addressPrivacy(adapter.name) }
        }
        return DoctorFacts(
            survey: survey,
            busAddressFromEnvironment: sources.busAddress == nil && getenv("DBUS_SYSTEM_BUS_ADDRESS") != nil,
            installedBluetoothd: installedBluetoothd(sources.bluetoothdBinaries, timeout: sources.versionTimeout),
            rfkill: rfkillSwitches(sources.rfkill),
            mainConf: mainConf(sources.mainConf),
            kernel: kernelRelease(),
            addressPrivacy: privacy, hostname: hostname(), userName: userName(), clock: sources.clock())
    }

    /// adjtimex with nothing to change (no privilege needed): `STA_UNSYNC` or the `TIME_ERROR`
    /// state mean nobody has synchronised the clock.
    static func clockSync() -> ClockSync {
        var status: Int32 = 0
        let state = blesend_clock_state(&status)
        guard state >= 0 else { return .unknown(errno: errno) }
        return status & Int32(BLESEND_STA_UNSYNC) != 0 || state == Int32(BLESEND_TIME_ERROR) ? .unsynchronised : .synchronised
    }

    static func hostname() -> String? {
        var name = [CChar](repeating: 0, count: 256)
        guard gethostname(&name, name.count - 1) == 0 else { return nil }
        let text = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return text.isEmpty ? nil : text
    }

    /// The login name of this process's user (from the password database, not the environment).
    static func userName() -> String? {
        guard let entry = getpwuid(getuid()), let name = entry.pointee.pw_name else { return nil }
        return String(cString: name)
    }

    /// The first of `binaries` that prints a version for `--version` (bluetoothd prints "5.66").
    static func installedBluetoothd(_ binaries: [String], timeout: Duration) -> InstalledBluetoothd? {
        for binary in binaries {
            guard let path = executablePath(binary),
                  let output = VersionCommand.output(of: path, ["--version"], timeout: timeout) else { continue }
            let version = output.split(whereSeparator: \.isNewline).first.map { $0.filter { $0 != " " && $0 != "\t" && $0 != "\r" } } ?? ""
            if !version.isEmpty, version.count <= 32, version.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }) {
                return InstalledBluetoothd(path: path, version: String(version))
            }
        }
        return nil
    }

    /// `path` when it is absolute and executable; nil for anything else (a bare name is never
    /// looked up in `PATH`).
    static func executablePath(_ path: String) -> String? {
        guard path.hasPrefix("/") else { return nil }
        return access(path, X_OK) == 0 ? path : nil
    }

    /// `/sys/class/rfkill/rfkillN/{name,type,soft,hard}`.
    static func rfkillSwitches(_ directory: String) -> [RfkillSwitch]? {
        guard let entries = SmallFile.names(in: directory) else { return nil }
        return entries.compactMap { entry in
            let folder = "\(directory)/\(entry)"
            guard let type = SmallFile.firstLine("\(folder)/type") else { return nil }
            return RfkillSwitch(
                name: SmallFile.firstLine("\(folder)/name") ?? entry, type: type,
                softBlocked: SmallFile.firstLine("\(folder)/soft") == "1", hardBlocked: SmallFile.firstLine("\(folder)/hard") == "1")
        }
    }

    static func mainConf(_ path: String) -> MainConfFile {
        switch SmallFile.read(path, limit: BluetoothdMainConf.sizeLimit) {
        case .text(let text): .read(path: path, BluetoothdMainConf(parsing: text))
        case .absent: .absent(path: path)
        case .failed(let reason): .unreadable(path: path, reason: reason)
        }
    }

    static func kernelRelease() -> KernelRelease? {
        var names = utsname()
        guard uname(&names) == 0 else { return nil }
        let release = withUnsafeBytes(of: &names.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return release.isEmpty ? nil : KernelRelease(release)
    }
}

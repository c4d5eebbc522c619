#if canImport(Glibc)
import Glibc
#endif
import BlueZ

/// Where `doctor` looks; `system` is this machine, tests point it elsewhere.
struct DoctorSources: Sendable {
    /// Nil: the system bus (`DBUS_SYSTEM_BUS_ADDRESS`, or the default socket).
    var busAddress: String?
    var mainConf = "/etc/bluetooth/main.conf"
    var rfkill = "/sys/class/rfkill"
    /// Tried in order until one prints a version; a name without `/` is looked up in `PATH`.
    var bluetoothdBinaries = ["bluetoothd", "/usr/libexec/bluetooth/bluetoothd", "/usr/lib/bluetooth/bluetoothd"]
    var versionTimeout: Duration = .seconds(2)

    static let system = DoctorSources()
}

/// The edge: reads the facts from the system. Nothing is changed; the D-Bus part is
/// `BluetoothdSurvey`'s, and the rest is files, `uname` and `bluetoothd --version`.
extension DoctorFacts {
    static func gather(_ sources: DoctorSources) async -> DoctorFacts {
        let survey = await BluetoothdSurvey.take(busAddress: sources.busAddress)
        return DoctorFacts(
            survey: survey,
            busAddressFromEnvironment: sources.busAddress == nil && getenv("DBUS_SYSTEM_BUS_ADDRESS") != nil,
            installedBluetoothd: installedBluetoothd(sources.bluetoothdBinaries, timeout: sources.versionTimeout),
            rfkill: rfkillSwitches(sources.rfkill),
            mainConf: mainConf(sources.mainConf),
            kernel: kernelRelease())
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

    /// `name` itself when it holds a `/`, else the first executable `PATH` entry of that name.
    static func executablePath(_ name: String) -> String? {
        if name.contains("/") { return access(name, X_OK) == 0 ? name : nil }
        let searchPath = getenv("PATH").map { String(cString: $0) } ?? "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
        for folder in searchPath.split(separator: ":") where !folder.isEmpty {
            let candidate = "\(folder)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
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

import BlueZ

/// Turns `DoctorFacts` into the report for a role: which checks apply, how each comes out, its
/// wording and its fix. Pure: no I/O; the same facts give the same report.
///
/// The bus, bluetoothd, permission and adapter checks form a chain: when one fails, the checks
/// that need it are listed as not checked. rfkill, main.conf and the kernel are always checked.
enum DoctorJudge {
    static func report(_ facts: DoctorFacts, role: DoctorRole, adapter wanted: String?) -> DoctorReport {
        var findings = Findings()
        let adapters = judgeBluetoothd(facts, role: role, wanted: wanted, into: &findings)
        let rfkill = rfkillCheck(facts.rfkill, adapter: adapters?.chosen.name ?? wanted)
        findings.add(rfkill)
        if let adapters {
            findings.add(poweredCheck(adapters.chosen, onlyAdapter: adapters.all.count == 1, rfkill: rfkill))
            findings.add(leCheck(adapters.chosen))
            if role == .receiver {
                findings.add(peripheralCheck(adapters.chosen))
                findings.add(advertisingCheck(adapters.chosen))
            }
            findings.add(deviceNameCheck(adapters.chosen, hostname: facts.hostname, userName: facts.userName))
            if role == .receiver {
                findings.add(addressPrivacyCheck(adapters.chosen, facts.addressPrivacy[adapters.chosen.name]))
            }
        }
        for check in mainConfChecks(facts.mainConf) { findings.add(check) }
        findings.add(kernelCheck(facts.kernel))
        findings.add(clockCheck(facts.clock))
        return findings.report(role: role)
    }

    /// The checks that need the chosen adapter, for `role`.
    static func adapterChecks(_ role: DoctorRole) -> [DoctorCheck.Name] {
        [.adapter, .powered, .le] + (role == .receiver ? [.peripheral, .advertising] : []) + [.deviceName]
            + (role == .receiver ? [.addressPrivacy] : [])
    }

    /// Checks and the names of those that could not run, put in the order of `DoctorCheck.Name`.
    struct Findings {
        private var checks: [DoctorCheck.Name: DoctorCheck] = [:]
        private var skipped: Set<DoctorCheck.Name> = []

        mutating func add(_ check: DoctorCheck) { checks[check.name] = check }
        mutating func skip(_ names: [DoctorCheck.Name]) { skipped.formUnion(names) }

        func report(role: DoctorRole) -> DoctorReport {
            DoctorReport(
                role: role, checks: DoctorCheck.Name.allCases.compactMap { checks[$0] },
                notChecked: DoctorCheck.Name.allCases.filter { skipped.contains($0) && checks[$0] == nil })
        }
    }

    // MARK: The chain: bus, bluetoothd, permission, adapter

    /// Adds the chain's checks; returns the chosen adapter and all of them when the chain got that far.
    private static func judgeBluetoothd(_ facts: DoctorFacts, role: DoctorRole, wanted: String?, into findings: inout Findings)
        -> (chosen: AdapterStatus, all: [AdapterStatus])?
    {
        let survey = facts.survey
        let afterBus: [DoctorCheck.Name] = [.bluetoothd, .permission] + adapterChecks(role)
        if let failure = survey.busFailure {
            let fix = facts.busAddressFromEnvironment
                ? "DBUS_SYSTEM_BUS_ADDRESS points at no bus: unset it, or set it to the system bus's address"
                : SetupFix.startSystemBus
            findings.add(.fail(.bus, "cannot reach the system bus at \(survey.busAddress): \(describe(failure))", fix: fix))
            findings.skip(afterBus)
            return nil
        }
        findings.add(.ok(.bus, survey.busAddress + (facts.busAddressFromEnvironment ? " (DBUS_SYSTEM_BUS_ADDRESS)" : "")))

        let afterBluetoothd = Array(afterBus.dropFirst())
        let version = facts.installedBluetoothd.map { "version \($0.version) (\($0.path) --version)" }
            ?? "version unknown (no bluetoothd binary answered --version)"
        switch survey.bluetoothdRunning {
        case .success(true)?:
            findings.add(.ok(.bluetoothd, "running (org.bluez is on the bus); \(version)"))
        case .success(false)?:
            let installed = facts.installedBluetoothd.map { "installed: \($0.version)" } ?? "no bluetoothd binary found"
            findings.add(.fail(.bluetoothd, "bluetoothd is not running (no org.bluez on the bus); \(installed)",
                               fix: facts.installedBluetoothd == nil ? SetupFix.installBlueZ : SetupFix.startBluetoothd))
            findings.skip(afterBluetoothd)
            return nil
        case .failure(let error)?:
            findings.add(.fail(.bluetoothd, "the bus did not say whether bluetoothd runs: \(describe(error))",
                               fix: SetupFix.restartBluetoothd))
            findings.skip(afterBluetoothd)
            return nil
        case nil:
            findings.skip(afterBus)
            return nil
        }

        let afterPermission = adapterChecks(role)
        let adapters: [AdapterStatus]
        switch survey.adapters {
        case .success(let list)?:
            adapters = list
            findings.add(.ok(.permission, "bluetoothd answers this user (GetManagedObjects on /)"))
        case .failure(.accessDenied(let refusal))?:
            findings.add(.fail(.permission, "the system bus does not let this user talk to bluetoothd (\(refusal.message))",
                               fix: SetupFix.joinBluetoothGroup))
            findings.skip(afterPermission)
            return nil
        case .failure(.bluetoothdNotRunning)?:
            findings.add(.fail(.permission, "bluetoothd left the bus while it was asked", fix: SetupFix.startBluetoothd))
            findings.skip(afterPermission)
            return nil
        case .failure(let error)?:
            findings.add(.fail(.permission, "bluetoothd did not answer GetManagedObjects: \(describe(error))",
                               fix: SetupFix.restartBluetoothd))
            findings.skip(afterPermission)
            return nil
        case nil:
            findings.skip([.permission] + afterPermission)
            return nil
        }

        let chosen = if let wanted { adapters.first { $0.name == wanted || $0.path == wanted } } else { adapters.first }
        guard let chosen else {
            let names = adapters.map(\.name).joined(separator: ", ")
            if let wanted, !adapters.isEmpty {
                findings.add(.fail(.adapter, "no adapter \(wanted); bluetoothd has \(names)",
                                   fix: "pick one of them: --adapter \(adapters[0].name)"))
            } else {
                findings.add(.fail(.adapter, "bluetoothd knows no adapter", fix: SetupFix.connectAdapter))
            }
            findings.skip(Array(afterPermission.dropFirst()))
            return nil
        }
        var detail = chosen.name + (chosen.address.map { " (\($0))" } ?? "")
        if wanted == nil && adapters.count > 1 {
            detail += ", the first of \(adapters.map(\.name).joined(separator: ", ")) (--adapter picks another)"
        }
        findings.add(.ok(.adapter, detail))
        return (chosen, adapters)
    }

    // MARK: The adapter

    static func rfkillCheck(_ switches: [RfkillSwitch]?, adapter: String?) -> DoctorCheck {
        guard let switches else {
            return .warn(.rfkill, "cannot tell: /sys/class/rfkill cannot be read (a kernel without rfkill, or a container)")
        }
        let relevant = switches.filter { $0.governs(adapter: adapter) }
        let hard = relevant.filter(\.hardBlocked).map(\.name)
        let soft = relevant.filter(\.softBlocked).map(\.name)
        if !hard.isEmpty {
            let alsoSoft = soft.isEmpty ? "" : "; soft-blocked too: \(soft.joined(separator: ", "))"
            return .fail(.rfkill, "hard-blocked: \(hard.joined(separator: ", "))\(alsoSoft)", fix: SetupFix.hardUnblock)
        }
        if !soft.isEmpty {
            return .fail(.rfkill, "soft-blocked: \(soft.joined(separator: ", "))", fix: SetupFix.softUnblock)
        }
        if relevant.isEmpty { return .ok(.rfkill, "no Bluetooth rfkill switch") }
        return .ok(.rfkill, "not blocked (\(relevant.map(\.name).joined(separator: ", ")))")
    }

    static func poweredCheck(_ adapter: AdapterStatus, onlyAdapter: Bool, rfkill: DoctorCheck) -> DoctorCheck {
        switch adapter.powered {
        case true?:
            return .ok(.powered, "\(adapter.name) is powered on")
        case false?:
            if rfkill.severity == .fail, let fix = rfkill.fix {
                return .fail(.powered, "\(adapter.name) is powered off, and rfkill blocks it: unblock it first", fix: fix)
            }
            return .fail(.powered, "\(adapter.name) is powered off", fix: SetupFix.powerOn(adapter, onlyAdapter: onlyAdapter))
        case nil:
            return .warn(.powered, "bluetoothd does not say whether \(adapter.name) is powered (no Adapter1.Powered)")
        }
    }

    /// LE itself. bluetoothd puts "central" in `Roles` when the controller does LE; without `Roles`
    /// (an older bluetoothd) `LEAdvertisingManager1` answers, as bluetoothd offers it on LE
    /// controllers only. The kernel's own answer (the management interface's settings) is not on D-Bus.
    static func leCheck(_ adapter: AdapterStatus) -> DoctorCheck {
        if let roles = adapter.roles {
            let list = roles.isEmpty ? "none" : roles.joined(separator: ", ")
            return roles.contains("central")
                ? .ok(.le, "\(adapter.name) does LE (Adapter1.Roles: \(list))")
                : .fail(.le, "\(adapter.name) has no LE (Adapter1.Roles: \(list))", fix: SetupFix.leAdapter)
        }
        return adapter.advertising != nil
            ? .ok(.le, "\(adapter.name) does LE: it has LEAdvertisingManager1, which bluetoothd offers on LE controllers only (no Adapter1.Roles here)")
            : .fail(.le, "\(adapter.name) has no LE: bluetoothd offers it no LEAdvertisingManager1 (and has no Adapter1.Roles to ask)",
                    fix: SetupFix.leAdapter)
    }

    /// The receiver advertises: "peripheral" in `Roles` (the controller can advertise), else, without
    /// `Roles`, `LEAdvertisingManager1`.
    static func peripheralCheck(_ adapter: AdapterStatus) -> DoctorCheck {
        if let roles = adapter.roles {
            let list = roles.isEmpty ? "none" : roles.joined(separator: ", ")
            return roles.contains("peripheral")
                ? .ok(.peripheral, "\(adapter.name) can be a peripheral (Adapter1.Roles: \(list))")
                : .fail(.peripheral, "\(adapter.name) cannot advertise (Adapter1.Roles: \(list)), and a receiver must",
                        fix: SetupFix.advertisingAdapter)
        }
        return adapter.advertising != nil
            ? .ok(.peripheral, "\(adapter.name) has LEAdvertisingManager1 (no Adapter1.Roles here)")
            : .fail(.peripheral, "\(adapter.name) has no LEAdvertisingManager1, and a receiver must advertise", fix: SetupFix.advertisingAdapter)
    }

    /// Room for the receiver's advertisement: `SupportedInstances` above zero and, to start now, one free.
    static func advertisingCheck(_ adapter: AdapterStatus) -> DoctorCheck {
        guard let instances = adapter.advertising else {
            return .fail(.advertising, "bluetoothd offers no LEAdvertisingManager1 on \(adapter.name)", fix: SetupFix.advertisingAdapter)
        }
        guard let supported = instances.supported else {
            return .warn(.advertising, "LEAdvertisingManager1 does not say how many advertisements \(adapter.name) runs at once")
        }
        guard supported > 0 else {
            return .fail(.advertising, "\(adapter.name) can run no advertisement (SupportedInstances 0)", fix: SetupFix.advertisingAdapter)
        }
        let active = instances.active ?? 0
        if active >= supported {
            return .warn(.advertising,
                         "all \(supported) advertising instances of \(adapter.name) are in use (ActiveInstances \(active)): "
                             + "a receiver cannot advertise until one stops (another blerecv running?)",
                         fix: "stop the other program that advertises, or receive on another adapter (--adapter hciN)")
        }
        return .ok(.advertising, "\(supported - active) of \(supported) advertising instances free")
    }

    // MARK: The kernel

    static func kernelCheck(_ kernel: KernelRelease?) -> DoctorCheck {
        guard let kernel else { return .warn(.kernel, "uname gave no kernel release") }
        switch kernel.hasLEChannels {
        case true? where kernel.predatesChanDelFix == true:
            return .warn(.kernel, "\(kernel.text): L2CAP channels available, but a kernel before 6.12 may lack the fix for a list corruption in hci_chan_del: a link that fails as it comes up (two senders at once) can oops the kernel and take bluetoothd down (seen in the lab on Debian 12's 6.1)",
                         fix: "a 6.12 or later kernel (Debian 12: linux-image-amd64 from bookworm-backports)")
        case true?:
            return .ok(.kernel, "\(kernel.text): L2CAP channels available (any 4.x or later kernel has them; judged by the version alone)")
        case false?:
            return .warn(.kernel, "\(kernel.text): L2CAP channels may be missing (a kernel before 4.0); blesend then uses GATT, which is slower",
                         fix: "a 4.x or later kernel")
        case nil:
            return .warn(.kernel, "\(kernel.text): no version in it, so L2CAP channels are not known to be there")
        }
    }

    /// A BlueZ error as the detail of a check: the bus's or bluetoothd's own words where there are some.
    static func describe(_ error: BlueZError) -> String {
        switch error {
        case .busUnavailable(let cause): "\(cause)"
        case .accessDenied(let refusal): refusal.message
        case .bluez(let remote): "\(remote.name): \(remote.message)"
        case .dbus(let dbus): "\(dbus)"
        default: "\(error)"
        }
    }
}

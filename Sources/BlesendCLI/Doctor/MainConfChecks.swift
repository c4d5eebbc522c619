/// The main.conf settings that matter to blesend, judged: what is set, and a warning (or, for
/// a setting that turns LE off, a failure) where it hurts. Defaults and ranges as in bluetoothd
/// 5.66's own main.conf.
extension DoctorJudge {
    static func mainConfChecks(_ file: MainConfFile) -> [DoctorCheck] {
        let conf: BluetoothdMainConf
        var checks: [DoctorCheck] = []
        switch file {
        case .absent(let path):
            conf = BluetoothdMainConf(parsing: "")
            checks.append(.ok(.mainConf, "no \(path): bluetoothd's defaults"))
        case .unreadable(let path, let reason):
            return [.warn(.mainConf, "cannot read \(path) (\(reason)), so its settings are not checked")]
        case .read(let path, let parsed):
            conf = parsed
            if let line = parsed.malformedLines.first {
                checks.append(.warn(
                    .mainConf,
                    "line \(line) of \(path) is neither key = value, a [Section] nor a # comment: GLib's parser, which "
                        + "bluetoothd uses, rejects the whole file, so bluetoothd runs on its defaults",
                    fix: SetupFix.editMainConf("fix or remove line \(line)", path: path)))
            } else {
                checks.append(.ok(.mainConf, "\(path) read"))
            }
        }
        let path = file.path
        checks.append(controllerModeCheck(conf.value("General", "ControllerMode"), path: path))
        checks.append(privacyCheck(conf.value("General", "Privacy")))
        checks.append(exchangeMTUCheck(conf.value("GATT", "ExchangeMTU"), path: path))
        checks.append(gattChannelsCheck(conf.value("GATT", "Channels"), path: path))
        return checks
    }

    /// `[General] ControllerMode`: dual (default) or le keep LE; bredr turns it off.
    static func controllerModeCheck(_ value: String?, path: String) -> DoctorCheck {
        let fix = SetupFix.editMainConf("set ControllerMode = dual in [General]", path: path)
        switch value {
        case nil: return .ok(.controllerMode, "not set: dual (BR/EDR and LE)")
        case "dual"?, "le"?: return .ok(.controllerMode, value ?? "")
        case "bredr"?: return .fail(.controllerMode, "ControllerMode = bredr turns LE off, and blesend needs LE", fix: fix)
        case let other?: return .warn(.controllerMode, "ControllerMode = \(other) is not dual, bredr or le", fix: fix)
        }
    }

    /// `[General] Privacy`: reported only; it decides which address the machine shows, not whether
    /// blesend works (docs/threat-model.md, "Advertising").
    static func privacyCheck(_ value: String?) -> DoctorCheck {
        guard let value else { return .ok(.privacy, "not set: off (the adapter's public address is what others see)") }
        return .ok(.privacy, value)
    }

    /// `[GATT] ExchangeMTU` (23–517, default 517): the ATT MTU bluetoothd offers. Below 247 a GATT
    /// transfer moves small values; an L2CAP channel does not depend on it.
    static func exchangeMTUCheck(_ value: String?, path: String) -> DoctorCheck {
        let remove = SetupFix.editMainConf("remove ExchangeMTU from [GATT]", path: path)
        guard let value else { return .ok(.exchangeMTU, "not set: 517") }
        guard let mtu = Int(value) else {
            return .warn(.exchangeMTU, "ExchangeMTU = \(value) is not a number bluetoothd can read", fix: remove)
        }
        guard (23...517).contains(mtu) else {
            return .warn(.exchangeMTU, "ExchangeMTU = \(mtu) is outside 23–517", fix: remove)
        }
        guard mtu >= 247 else {
            return .warn(.exchangeMTU, "ExchangeMTU = \(mtu): small MTU: GATT will be slow; remove ExchangeMTU (L2CAP channels do not depend on it)",
                         fix: remove)
        }
        return .ok(.exchangeMTU, String(mtu))
    }

    /// `[GATT] Channels` (1–5, default 3): ATT channels; 1 turns EATT off, which the lab measured
    /// as a little slower over GATT and harmless otherwise.
    static func gattChannelsCheck(_ value: String?, path: String) -> DoctorCheck {
        guard let value else { return .ok(.gattChannels, "not set: 3 (EATT on)") }
        guard let channels = Int(value), (1...5).contains(channels) else {
            return .warn(.gattChannels, "Channels = \(value) is not a number from 1 to 5",
                         fix: SetupFix.editMainConf("remove Channels from [GATT]", path: path))
        }
        return .ok(.gattChannels, channels == 1 ? "1 (EATT off)" : "\(channels) (EATT on)")
    }
}

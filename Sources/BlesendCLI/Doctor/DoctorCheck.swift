/// One line of `doctor`'s report: what was checked, how it came out, what was found, and for a
/// failure the one command or setting that fixes it.
struct DoctorCheck: Sendable, Equatable {
    /// The checks, in the order they are shown. The raw value is the stable `name` in `--json`.
    enum Name: String, CaseIterable, Sendable {
        case bus
        case bluetoothd
        case permission
        case adapter
        case rfkill
        case powered
        case le
        case peripheral
        case advertising
        case deviceName = "device-name"
        case addressPrivacy = "address-privacy"
        case mainConf = "main-conf"
        case controllerMode = "controller-mode"
        case privacy
        case exchangeMTU = "exchange-mtu"
        case gattChannels = "gatt-channels"
        case kernel
        case clock

        /// What the text report calls it.
        var label: String {
            switch self {
            case .bus: "system bus"
            case .bluetoothd: "bluetoothd"
            case .permission: "permission"
            case .adapter: "adapter"
            case .rfkill: "rfkill"
            case .powered: "powered"
            case .le: "LE"
            case .peripheral: "peripheral role"
            case .advertising: "advertising"
            case .deviceName: "device name"
            case .addressPrivacy: "address privacy"
            case .mainConf: "main.conf"
            case .controllerMode: "ControllerMode"
            case .privacy: "Privacy"
            case .exchangeMTU: "ExchangeMTU"
            case .gattChannels: "GATT Channels"
            case .kernel: "kernel"
            case .clock: "clock"
            }
        }
    }

    /// `fail` makes the role's verdict fail; `warn` is worth knowing but does not.
    enum Severity: String, Sendable {
        case ok
        case warn
        case fail
    }

    let name: Name
    let severity: Severity
    let detail: String
    let fix: String?

    static func ok(_ name: Name, _ detail: String) -> DoctorCheck {
        DoctorCheck(name: name, severity: .ok, detail: detail, fix: nil)
    }

    static func warn(_ name: Name, _ detail: String, fix: String? = nil) -> DoctorCheck {
        DoctorCheck(name: name, severity: .warn, detail: detail, fix: fix)
    }

    /// A failure always comes with its fix.
    static func fail(_ name: Name, _ detail: String, fix: String) -> DoctorCheck {
        DoctorCheck(name: name, severity: .fail, detail: detail, fix: fix)
    }
}

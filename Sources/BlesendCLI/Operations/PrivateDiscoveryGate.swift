import BlueZ

/// Whether `blerecv --private-discovery` may advertise, from the adapter's address privacy
/// (`AddressPrivacy`, the kernel's own setting). Pure; `ReceiveOperation` asks it before it
/// registers anything.
///
/// Without LE privacy every advertisement carries the adapter's fixed address, which links them
/// all and names the machine: the tags would hide nothing, while the receiver would look as if it
/// hid something. So it refuses (exit 78), unless told `--allow-public-address` (the lab's virtual
/// controllers, or a user who wants the sender-side filtering and accepts being followed).
enum PrivateDiscoveryGate {
    enum Verdict: Equatable {
        case advertise
        /// Advertise, and say this.
        case advertiseAnyway(warning: String)
        case refuse(Refusal)
    }

    enum Refusal: Equatable {
        case privacyOff(adapter: String)
        case privacyUnknown(adapter: String, reason: PrivacyQueryFailure)
    }

    static func judge(_ privacy: AddressPrivacy, adapter: String, allowPublicAddress: Bool) -> Verdict {
        switch (privacy, allowPublicAddress) {
        case (.on, _):
            return .advertise
        case (.off, false):
            return .refuse(.privacyOff(adapter: adapter))
        case (.unknown(let reason), false):
            return .refuse(.privacyUnknown(adapter: adapter, reason: reason))
        case (.off, true):
            return .advertiseAnyway(warning: "private discovery with LE privacy off on \(adapter) (--allow-public-address): "
                + "its fixed address is in every advertisement and links them all")
        case (.unknown(let reason), true):
            return .advertiseAnyway(warning: "private discovery: cannot tell whether \(adapter) uses private addresses (\(reason)); "
                + "advertising anyway (--allow-public-address)")
        }
    }

    /// How to turn LE privacy on, for messages and `doctor`.
    static let enablePrivacy =
        "set Privacy = device under [General] in /etc/bluetooth/main.conf, then: \(SetupFix.restartBluetoothd)"
}

extension CLIError {
    init(_ refusal: PrivateDiscoveryGate.Refusal) {
        switch refusal {
        case .privacyOff(let adapter):
            self.init(.addressNotPrivate,
                      "--private-discovery refused: \(adapter) advertises from its fixed address (LE privacy is off), which links every advertisement and names this machine",
                      hint: "\(PrivateDiscoveryGate.enablePrivacy); or run without --private-discovery")
        case .privacyUnknown(let adapter, let reason):
            self.init(.addressNotPrivate,
                      "--private-discovery refused: cannot tell whether \(adapter) uses private addresses (\(reason))",
                      hint: "check with: btmgmt info (look for privacy in current settings); to turn it on, \(PrivateDiscoveryGate.enablePrivacy)")
        }
    }
}

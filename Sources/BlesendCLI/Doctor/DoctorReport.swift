/// What `doctor` found for one role: its checks in order, the checks it could not run because
/// one they need failed, and the verdict.
struct DoctorReport: Sendable, Equatable {
    let role: DoctorRole
    let checks: [DoctorCheck]
    /// Checks left out because an earlier one failed (no adapter: nothing to ask about its power).
    let notChecked: [DoctorCheck.Name]

    /// Everything the role needs is fine: no check failed (warnings allowed).
    var ok: Bool { !checks.contains { $0.severity == .fail } }

    /// 0 when ready; 67 (Bluetooth not usable here, as a transfer would exit) when a check failed.
    var exitStatus: ExitStatus { ok ? .success : .bluetoothUnavailable }

    func check(_ name: DoctorCheck.Name) -> DoctorCheck? { checks.first { $0.name == name } }
}

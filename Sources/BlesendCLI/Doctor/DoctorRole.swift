/// Whose needs `doctor` checks: `blesend doctor` the sender's (a GATT central that scans and
/// connects), `blerecv doctor` the receiver's (a peripheral that must also advertise).
enum DoctorRole: String, Sendable {
    case sender
    case receiver
}

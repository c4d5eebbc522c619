/// One file of a simulated disk (`SimulatedJournalDisk`, `SimulatedPartialFolder`): its bytes as
/// they are now, and as its last sync left them (what a power cut keeps).
final class SimulatedFile {
    var current: [UInt8]
    var durable: [UInt8]

    init(current: [UInt8], durable: [UInt8]) {
        self.current = current
        self.durable = durable
    }
}

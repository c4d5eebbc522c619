/// The running kernel's release as `uname -r` gives it ("6.1.0-56-amd64"), and the version it
/// starts with.
struct KernelRelease: Sendable, Equatable {
    let text: String
    /// "6.1.0-56-amd64" → 6 and 1; nil when the text does not start with "major.minor".
    let major: Int?
    let minor: Int?

    init(_ text: String) {
        self.text = text
        let majorDigits = text.prefix { $0.isASCII && $0.isNumber }
        let rest = text.dropFirst(majorDigits.count)
        let minorDigits = rest.dropFirst().prefix { $0.isASCII && $0.isNumber }
        if let major = Int(majorDigits), rest.first == ".", let minor = Int(minorDigits) {
            self.major = major
            self.minor = minor
        } else {
            self.major = nil
            self.minor = nil
        }
    }

    /// LE credit-based L2CAP channels (the kernel's `CONFIG_BT_LE`, on in distribution kernels)
    /// came with Linux 3.14; any 4.x or later kernel is taken to have them. Nil when the version
    /// is unknown. Decided from the version alone: the kernel's build options are not read.
    var hasLEChannels: Bool? { major.map { $0 >= 4 } }

    /// Whether the kernel comes before 6.12, whose Debian kernels carry the upstream fix
    /// "Bluetooth: L2CAP: Fix corrupted list in hci_chan_del" (Debian 13's 6.12 changelog lists it;
    /// Debian 12's 6.1, up to 6.1.192, does not). Without it, an LE link torn down while an L2CAP
    /// socket on it is being released corrupts a kernel list: in the lab, a central whose link
    /// failed right after it came up (two centrals answering one advertisement) hit
    /// `kernel BUG at lib/list_debug.c` in `hci_chan_del` and bluetoothd died (lab/README.md).
    /// Nil when the version is unknown. Judged by the version alone: a vendor may have backported it.
    var predatesChanDelFix: Bool? {
        guard let major, let minor else { return nil }
        return major < 6 || (major == 6 && minor < 12)
    }
}

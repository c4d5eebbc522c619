/// How long a side waits after failed pairing attempts before it tries again (docs/protocol.md
/// §9.5): 5 s after the first, doubling with each further failure, at most 5 minutes. The
/// receiver shows no code meanwhile (and answers `busy`); the sender does not connect.
public enum PairingPause {
    public static let first = Duration.seconds(5)
    public static let longest = Duration.seconds(300)

    /// The pause after `failures` failed attempts in a row (none after none).
    public static func after(failures: Int) -> Duration {
        guard failures > 0 else { return .zero }
        return min(longest, first * (1 << min(failures - 1, 16)))
    }
}

import BlueZ

/// The release version, in one place: `blesend --version` and `blerecv --version` print it, and
/// scripts/package.sh reads the `release` line below for the Debian package's version (and checks
/// the built binaries agree), so the package and the programs cannot drift apart.
public enum BlesendVersion {
    /// Bump for each release; add a matching entry to packaging/changelog.
    public static let release = "0.5.0"

    /// One line for `--version`: `blesend 0.5.0 (protocol 1)`. The protocol version is the one the
    /// GATT service publishes (docs/protocol.md), so a user can tell whether two builds interoperate.
    static func line(tool: String) -> String {
        "\(tool) \(release) (protocol \(BlesendGATT.protocolVersion))"
    }
}

import BlesendCLI
import BlueZ
import Testing
import TestSupport

/// `--version`: both tools print one line with the release (the package's version, from
/// BlesendVersion.release) and the protocol version the GATT service publishes.
@Test(arguments: ["blesend", "blerecv"])
func versionPrintsTheReleaseAndTheProtocolOnOneLine(tool: String) throws {
    let run = try CommandRun.run(tool, ["--version"])
    #expect(run.status == 0, "\(run.stderr)")
    #expect(run.stdout == "\(tool) \(BlesendVersion.release) (protocol \(BlesendGATT.protocolVersion))\n")
    #expect(run.stderr.isEmpty)
}

@Test func theReleaseIsADebianFriendlyVersion() {
    // scripts/package.sh uses it as the package version: digits and dots, starting with a digit.
    let release = BlesendVersion.release
    #expect(release.first?.isNumber == true)
    #expect(release.allSatisfy { $0.isNumber || $0 == "." })
    #expect(release.split(separator: ".").count == 3)
}

@Test func theReleaseHasItsChangelogEntries() throws {
    // scripts/package.sh refuses a release without the Debian changelog's entry; CHANGELOG.md says
    // what changed for users and for the wire.
    let debian = try String(contentsOfFile: packageRoot + "/packaging/changelog", encoding: .utf8)
    #expect(debian.hasPrefix("blesend (\(BlesendVersion.release)) "))
    let changelog = try String(contentsOfFile: packageRoot + "/CHANGELOG.md", encoding: .utf8)
    #expect(changelog.contains("\n## [\(BlesendVersion.release)] - "))
    #expect(BlesendVersion.release == "0.5.0")
}

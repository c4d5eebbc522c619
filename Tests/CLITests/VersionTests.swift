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

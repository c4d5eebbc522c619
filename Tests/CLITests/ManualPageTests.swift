import Foundation
import Testing
@testable import BlesendCLI

/// docs/man: the ENVIRONMENT, FILES and EXIT STATUS sections are the code's tables
/// (ManualSections), as scripts/man.sh put them there; a table changed without regenerating the
/// pages fails here.
@Test(arguments: [ManualSections.Tool.blesend, .blerecv])
func theManPagesSectionsAreTheCodesTables(tool: ManualSections.Tool) throws {
    let page = try String(contentsOfFile: "\(packageRoot)/docs/man/\(tool.rawValue).1", encoding: .utf8)
    let start = try #require(page.range(of: ".Sh ENVIRONMENT\n"), "no ENVIRONMENT section: run scripts/man.sh")
    let end = try #require(page.range(of: ".Sh AUTHORS\n"))
    #expect(String(page[start.lowerBound..<end.lowerBound]) == ManualSections.mdoc(tool: tool), "run scripts/man.sh")
    #expect(!page.contains(".Ex -std"))
}

@Test func everyExitStatusIsInTheManualsTable() {
    let sections = ManualSections.mdoc(tool: .blesend)
    for status in ExitStatus.allCases {
        #expect(sections.contains("\n.It \(status.rawValue)\n\(status.summary): "), "exit \(status.rawValue)")
        #expect(!status.documentation.isEmpty)
    }
}

@Test func theManPagesKeepCharactersOutsideASCII() throws {
    // doctor's --help explains its marks: ✓ fine, ✗ in the way.
    let page = try String(contentsOfFile: "\(packageRoot)/docs/man/blesend.1", encoding: .utf8)
    #expect(page.contains("\\[u2713] fine"))
    #expect(page.contains("\\[u2717] in the way"))
    #expect(ManualSections.escaped("✓ ok \\ …") == "\\[u2713] ok \\e \\[u2026]")
    #expect(ManualSections.escaped(".hidden") == "\\&.hidden")
}

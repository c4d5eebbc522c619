import Foundation
import Keys
import Session
@testable import SessionRunner
import Testing
@testable import BlesendCLI

/// The `blerecv --ask` prompt with scripted answers instead of a terminal: what it writes to the
/// trust directory, and that anything but a yes and a usable name writes nothing.
private struct Script: LineSource {
    var lines: [String]
    mutating func nextLine() async -> String? { lines.isEmpty ? nil : lines.removeFirst() }
}

private func trustDirectory() throws -> String {
    let path = NSTemporaryDirectory() + "blesend-ask-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

private func files(_ directory: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
}

private let request = ApprovalRequest(key: Identity.generate().publicKey, code: "123 456",
                                      offered: OfferedItem(kind: .file, name: "report.pdf", size: 2048))

private func ask(_ lines: [String], directory: String) async -> (FirstContactAnswers.Answer, String) {
    var shown = ""
    let prompt = FirstContactPrompt(write: { shown += $0 }, trustDirectory: directory)
    var script = Script(lines: lines)
    return (await prompt.ask(request, input: &script), shown)
}

@Test func yesAndANameTrustTheKeyAsBlerecvTrustDoes() async throws {
    let directory = try trustDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let (answer, shown) = await ask(["y", "bad name!", "bob"], directory: directory)
    #expect(answer == .approve(name: "bob"))
    #expect(files(directory) == ["bob.pub"])
    let trust = try TrustStore.load(directory: directory)
    #expect(trust.name(for: request.key.bytes) == "bob")
    #expect(shown.contains("123 456") && shown.contains("report.pdf") && shown.contains(request.fingerprint))
    #expect(shown.contains("check that blesend shows the same code"))
    #expect(shown.contains("not a usable peer name"))
}

@Test func aTakenNameIsAskedAgain() async throws {
    let directory = try trustDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    _ = try TrustStore.add(Identity.generate().publicKey, name: "bob", directory: directory)
    let (answer, _) = await ask(["yes", "bob", "bob2"], directory: directory)
    #expect(answer == .approve(name: "bob2"))
    #expect(files(directory) == ["bob.pub", "bob2.pub"])
}

@Test(arguments: [[], ["n"], [""], ["no"], ["maybe"], ["y"], ["y", ""], ["y", "../x", "a b", "!", "?", "."]])
func anythingButYesAndANameLeavesTheTrustDirectoryUnchanged(lines: [String]) async throws {
    let directory = try trustDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let (answer, _) = await ask(lines, directory: directory)
    #expect(answer == .decline)
    #expect(files(directory).isEmpty)
}

@Test func firstContactEventsMatchTheDocumentedSchema() throws {
    let schema = try JSONSchemaSubset.load()
    let stream = ApprovalRequest(key: request.key, code: "000 042", offered: OfferedItem(kind: .file, name: "-", size: nil))
    for line in [JSONLine.firstContact(request), .firstContact(stream), .firstContact(peer: "receiver", code: "123 456")] {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.text.utf8)) as? [String: Any])
        #expect(schema.violations(of: object).isEmpty, "\(line.text): \(schema.violations(of: object))")
        #expect(object["code"] as? String != nil)
    }
}

@Test func answersReachOnlyTheRequestTheyAnswer() {
    let answers = FirstContactAnswers()
    answers.post(.approve(name: "bob"), code: "111 111")
    #expect(answers.take(code: "222 222") == nil)
    // Dropped, not kept for a later request.
    #expect(answers.take(code: "111 111") == nil)
    answers.post(.decline, code: "333 333")
    #expect(answers.take(code: "333 333") == .decline)
}

import EventSchema
import Foundation
import Keys
import Session
@testable import SessionRunner
import Testing
@testable import BlesendCLI

/// The `blerecv --ask` prompt with scripted answers instead of a terminal: what it writes to the
/// trust directory, and that anything but this handshake's code and a usable name writes nothing.
///
/// Each scripted line says how many questions had been put when it was typed: a line typed before
/// the question that reads it is type-ahead, which `discardPending` (the terminal's `tcflush`)
/// throws away.
struct ScriptedTerminal: LineSource {
    struct Typed: ExpressibleByStringLiteral {
        var text: String
        /// Questions put before this line was typed (nil: typed in answer to whichever comes).
        var after: Int?
        init(_ text: String, after: Int?) { (self.text, self.after) = (text, after) }
        init(stringLiteral text: String) { self.init(text, after: nil) }
    }
    var lines: [Typed]
    private(set) var questions = 0

    init(lines: [Typed]) { self.lines = lines }

    mutating func nextLine() async -> String? { lines.isEmpty ? nil : lines.removeFirst().text }
    mutating func discardPending() {
        lines.removeAll { $0.after.map { $0 < questions + 1 } ?? false }
        questions += 1
    }
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

private func ask(_ lines: [ScriptedTerminal.Typed], directory: String) async -> (FirstContactPrompt.Outcome, String) {
    var shown = ""
    let prompt = FirstContactPrompt(write: { shown += $0 }, trustDirectory: directory)
    var script = ScriptedTerminal(lines: lines)
    return (await prompt.ask(request, input: &script), shown)
}

@Test func theCodeTypedAndANameTrustTheKeyAsBlerecvTrustDoes() async throws {
    let directory = try trustDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let (outcome, shown) = await ask(["123 456", "bad name!", "bob"], directory: directory)
    #expect(outcome == .accepted(name: "bob"))
    #expect(outcome.answer == .approve(name: "bob"))
    #expect(files(directory) == ["bob.pub"])
    let trust = try TrustStore.load(directory: directory)
    #expect(trust.name(for: request.key.bytes) == "bob")
    #expect(shown.contains("report.pdf") && shown.contains(request.fingerprint))
    #expect(shown.contains("type the 6-digit code blesend shows on the sender"))
    #expect(shown.contains("not a usable peer name"))
}

/// The receiver never shows the code: the user can only accept by reading it off the sender.
@Test func theReceiverNeverShowsTheCode() async throws {
    let directory = try trustDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    for lines: [ScriptedTerminal.Typed] in [["123 456", "bob"], ["654 321"], []] {
        let (_, shown) = await ask(lines, directory: directory)
        #expect(!shown.contains("123 456") && !shown.contains("123456"), "\(shown)")
    }
    #expect(!FirstContactPrompt.describe(request).contains("123 456"))
    #expect(!JSONLine.firstContact(request).text.contains("123 456"))
}

@Test(arguments: ["123456", " 123 456 ", "12 34 56", "123 456\r", "\t123456"])
func theCodeIsMatchedWithSpacesIgnored(typed: String) async throws {
    let directory = try trustDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let (outcome, _) = await ask([ScriptedTerminal.Typed(typed, after: nil), "bob"], directory: directory)
    #expect(outcome == .accepted(name: "bob"))
}

@Test func aTakenNameIsAskedAgain() async throws {
    let directory = try trustDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    _ = try TrustStore.add(Identity.generate().publicKey, name: "bob", directory: directory)
    let (outcome, _) = await ask(["123456", "bob", "bob2"], directory: directory)
    #expect(outcome == .accepted(name: "bob2"))
    #expect(files(directory) == ["bob.pub", "bob2.pub"])
}

/// A yes is not an answer any more: only the code the sender shows is. Each refusal says why.
@Test(arguments: [
    ([], FirstContactPrompt.Refusal.noCode), ([""], .noCode), (["   "], .noCode),
    (["y"], .wrongCode), (["yes"], .wrongCode), (["n"], .wrongCode), (["123 457"], .wrongCode), (["12345"], .wrongCode),
    (["1234567"], .wrongCode), (["123 456 7"], .wrongCode), (["١٢٣٤٥٦"], .wrongCode), (["123-456"], .wrongCode),
    (["123 456"], .noName), (["123 456", ""], .noName), (["123456", "../x", "a b", "!", "?", "."], .noName),
] as [([ScriptedTerminal.Typed], FirstContactPrompt.Refusal)])
func anythingButTheCodeAndANameLeavesTheTrustDirectoryUnchanged(lines: [ScriptedTerminal.Typed], why: FirstContactPrompt.Refusal) async throws {
    let directory = try trustDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let (outcome, _) = await ask(lines, directory: directory)
    #expect(outcome == .declined(why))
    #expect(outcome.answer == .decline)
    #expect(files(directory).isEmpty)
}

/// Type-ahead (lines typed before the question, e.g. meant for an earlier stranger's prompt) is
/// thrown away before each question and never answers it.
@Test func typeAheadNeverAnswersAQuestion() async throws {
    let directory = try trustDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    // The right code, typed before the prompt showed: discarded; the empty line then refuses.
    var (outcome, _) = await ask([ScriptedTerminal.Typed("123 456", after: 0), ScriptedTerminal.Typed("", after: 1)], directory: directory)
    #expect(outcome == .declined(.noCode))
    // A name typed together with the code (before the name question): discarded, the name asked is used.
    (outcome, _) = await ask([ScriptedTerminal.Typed("123 456", after: 1), ScriptedTerminal.Typed("eve", after: 1), ScriptedTerminal.Typed("bob", after: 2)],
                             directory: directory)
    #expect(outcome == .accepted(name: "bob"))
    #expect(files(directory) == ["bob.pub"])
}

@Test func firstContactEventsMatchTheDocumentedSchema() throws {
    let schema = try JSONSchemaSubset.load()
    let stream = ApprovalRequest(key: request.key, code: "000 042", offered: OfferedItem(kind: .file, name: "-", size: nil))
    for line in [JSONLine.firstContact(request), .firstContact(stream), .firstContact(peer: "receiver", code: "123 456")] {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.text.utf8)) as? [String: Any])
        #expect(schema.violations(of: object).isEmpty, "\(line.text): \(schema.violations(of: object))")
    }
    // blesend shows the code; blerecv does not (its user types it).
    for line in [JSONLine.firstContact(request), .firstContact(stream)] {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.text.utf8)) as? [String: Any])
        #expect(object["code"] == nil)
    }
}

@Test func answersReachOnlyTheRequestTheyAnswer() {
    let answers = FirstContactAnswers()
    let first = ApprovalRequest(key: request.key, code: "111 111", offered: request.offered)
    answers.post(.approve(name: "bob"), to: first)
    #expect(answers.take(for: ApprovalRequest(key: request.key, code: "222 222", offered: request.offered)) == nil)
    // Dropped, not kept for a later request.
    #expect(answers.take(for: first) == nil)
    let third = ApprovalRequest(key: request.key, code: "333 333", offered: request.offered)
    answers.post(.decline, to: third)
    #expect(answers.take(for: third) == .decline)
}

/// An answer about key A never approves key B, even when both handshakes showed the same code.
@Test func anAnswerApprovesOnlyTheKeyItWasGivenFor() {
    let answers = FirstContactAnswers()
    let asked = ApprovalRequest(key: Identity.generate().publicKey, code: "424 242", offered: request.offered)
    let other = ApprovalRequest(key: Identity.generate().publicKey, code: "424 242", offered: request.offered)
    answers.post(.approve(name: "alice"), to: asked)
    #expect(answers.take(for: other) == nil)
    answers.post(.approve(name: "alice"), to: asked)
    #expect(answers.take(for: asked) == .approve(name: "alice"))
}

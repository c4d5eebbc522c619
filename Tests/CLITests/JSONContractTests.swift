import BluetoothdStandIn
import EventSchema
import Foundation
import Testing
import TestSupport
@testable import BlesendCLI

/// The `--json` contract (issue 34, docs/json-events.md): `"v":1` on every line, stable
/// kebab-case error codes listed in the docs, and an `error` event for usage errors and signals.

@Test func everyLineCarriesTheContractVersionAfterItsEvent() {
    #expect(JSONLine("resolved").text == #"{"event":"resolved","v":1}"#)
    #expect(JSONLine("found", [("device", .string("d"))]).text == #"{"event":"found","v":1,"device":"d"}"#)
}

@Test func theErrorEventNamesTheStatusByItsCodeAndSaysItInWords() throws {
    let line = JSONLine.error(.peerRefused, message: "refused", hint: nil).text
    #expect(line == #"{"event":"error","v":1,"code":"peer-refused","exit":66,"summary":"untrusted or mismatched peer","message":"refused","hint":null}"#)
    #expect(try JSONSchemaSubset.load().violations(ofLine: line).isEmpty)
}

/// Every code is kebab-case and names one status.
@Test func errorCodesAreStableKebabCaseAndDistinct() {
    let codes = ExitStatus.allCases.map(\.code)
    #expect(Set(codes).count == codes.count)
    for code in codes { #expect(code.wholeMatch(of: /[a-z]+(-[a-z]+)*/) != nil, "\(code)") }
    #expect(ExitStatus.peerRefused.code == "peer-refused" && ExitStatus.notPaired.code == "not-paired")
    #expect(ExitStatus.usage.code == "usage" && ExitStatus.interrupted.code == "interrupted" && ExitStatus.terminated.code == "terminated")
    #expect(ExitStatus.terminated.rawValue == 128 + SIGTERM && ExitStatus.interrupted.rawValue == 128 + SIGINT)
}

/// The table "Error codes" of docs/json-events.md and `ExitStatus` list the same codes with the
/// same exit statuses (every status but success, which is never an error).
@Test func theDocumentedErrorCodesAreTheCodesOfTheExitStatuses() throws {
    let url = URL(fileURLWithPath: JSONSchemaSubset.path).deletingLastPathComponent().appendingPathComponent("json-events.md")
    let text = try String(contentsOf: url, encoding: .utf8)
    let section = try #require(text.components(separatedBy: "\n## Error codes\n").dropFirst().first?.components(separatedBy: "\n## ").first)
    var documented: [String: Int32] = [:]
    for line in section.split(separator: "\n") {
        guard let row = line.wholeMatch(of: /\| `([^`]+)` \| ([0-9]+) \|.*\|/) else { continue }
        #expect(documented[String(row.1)] == nil, "\(row.1) twice")
        documented[String(row.1)] = Int32(row.2)
    }
    let coded = Dictionary(uniqueKeysWithValues: ExitStatus.allCases.filter { $0 != .success }.map { ($0.code, $0.rawValue) })
    #expect(documented == coded, "docs/json-events.md's table vs ExitStatus: \(documented) vs \(coded)")
}

/// `--json` among the arguments, not after `--`.
@Test func jsonIsFoundInTheRawArguments() {
    #expect(UsageErrorEvent.wantsJSON(["--bogus", "--json"]))
    #expect(!UsageErrorEvent.wantsJSON(["--bogus"]))
    #expect(!UsageErrorEvent.wantsJSON(["--to", "r", "--", "--json"]))
}

/// A usage error with `--json` (the parser's: an unknown option, a bad value; a `validate()`'s)
/// writes one `error` event on stdout, code `usage`, exit 64; without `--json`, nothing there.
@Test(arguments: [
    ("blesend", ["--json", "--bogus"]),
    ("blesend", ["--json", "--to", "r.pub", "--timeout", "soon", "f"]),
    ("blesend", ["history", "--json", "--since", "whenever"]),
    ("blerecv", ["--json", "--no-such-option"]),
    ("blerecv", ["trust", "list", "--json", "--what"]),
])
func aUsageErrorWithJSONWritesAnErrorEvent(tool: String, arguments: [String]) throws {
    let run = try CommandRun.run(tool, arguments)
    #expect(run.status == 64, "\(run.stderr)")
    let lines = run.stdout.split(separator: "\n").map(String.init)
    #expect(lines.count == 1, "one event: \(run.stdout)")
    let line = try #require(lines.last)
    #expect(try JSONSchemaSubset.load().violations(ofLine: line).isEmpty, "\(line)")
    let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    #expect(object["event"] as? String == "error")
    #expect(object["code"] as? String == "usage")
    #expect(object["exit"] as? Int == 64)
    #expect((object["message"] as? String)?.isEmpty == false)
    #expect(!run.stderr.isEmpty, "people still read it on stderr")
    let plain = try CommandRun.run(tool, arguments.filter { $0 != "--json" })
    #expect(plain.status == 64)
    #expect(plain.stdout.isEmpty, "\(plain.stdout)")
}

/// `blerecv --json`, waiting for senders on a stand-in bluetoothd, stopped by SIGTERM (143,
/// `terminated`) or SIGINT (130, `interrupted`): the last line on stdout is that `error` event.
@Test(.timeLimit(.minutes(2)), arguments: [(SIGTERM, "terminated"), (SIGINT, "interrupted")])
func aSignalWithJSONWritesAnErrorEvent(signal: Int32, code: String) async throws {
    let fixture = try Fixture()
    defer { fixture.remove() }
    let d = fixture.dir
    let bus = try TestBus()
    defer { bus.stop() }
    let bluetoothd = try await FakeBluetoothd(address: bus.address)
    _ = try blerecv(["trust", "\(d)/me.pub", "--name", "me", "--dir", "\(d)/trusted"])
    // Off the cooperative pool, so that the stand-in keeps answering meanwhile.
    let run = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<CommandRun, any Error>) in
        DispatchQueue.global().async {
            continuation.resume(with: Result {
                try CommandRun.run("blerecv", ["--json", "--key", "\(d)/them", "--trust", "\(d)/trusted", "--out", d, "--no-l2cap"],
                                   environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address], timeout: 8, stopSignal: signal)
            })
        }
    }
    await bluetoothd.connection.close()
    #expect(run.status == 128 + signal, "\(run.stderr)")
    let lines = run.stdout.split(separator: "\n").map(String.init)
    #expect(lines.first?.hasPrefix(#"{"event":"listening","v":1,"#) == true, "it was waiting for senders: \(run.stdout) \(run.stderr)")
    let schema = try JSONSchemaSubset.load()
    for line in lines { #expect(schema.violations(ofLine: line).isEmpty, "\(line): \(schema.violations(ofLine: line))") }
    let last = try #require(try JSONSerialization.jsonObject(with: Data((lines.last ?? "").utf8)) as? [String: Any])
    #expect(last["event"] as? String == "error")
    #expect(last["code"] as? String == code)
    #expect(last["exit"] as? Int == Int(128 + signal))
    #expect((last["message"] as? String)?.contains("partial files kept for a resume") == true, "\(last)")
    #expect(lines.filter { $0.hasPrefix(#"{"event":"error""#) }.count == 1)
}

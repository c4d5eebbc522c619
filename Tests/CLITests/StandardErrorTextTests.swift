import BluetoothdStandIn
import Foundation
import SessionRunner
import Testing
import TestSupport
import Transfer
@testable import BlesendCLI

/// What the tools write on standard error when it is not a terminal, or next to `--json`
/// (issue 20, part 4): the right words, and no terminal control codes.

@Test func anInterruptClearsTheLineOnlyOnATerminal() {
    let plain = Interrupts.interruptedLine(standardErrorIsTerminal: false)
    #expect(plain == "interrupted: partial files removed\n")
    #expect(!plain.contains("\u{1B}") && !plain.contains("\r"))
    #expect(Interrupts.interruptedLine(standardErrorIsTerminal: true) == "\r\u{1B}[2Kinterrupted: partial files removed\n")
    #expect(Interrupts.interruptedLine(standardErrorIsTerminal: false, partialsKept: true) == "interrupted: partial files kept for a resume\n")
}

/// The real `blerecv`, advertising on a private bus served by the stand-in bluetoothd, stopped
/// with SIGTERM while it waits for senders, its standard error a pipe.
@Test(.timeLimit(.minutes(2)))
func sigtermWritesNoControlCodesToAPipe() async throws {
    let fixture = try Fixture()
    defer { fixture.remove() }
    let d = fixture.dir
    let bus = try TestBus()
    defer { bus.stop() }
    let bluetoothd = try await FakeBluetoothd(address: bus.address)
    _ = try blerecv(["trust", "\(d)/me.pub", "--name", "me", "--dir", "\(d)/trusted"])
    // `CommandRun` ends a tool that outlives its timeout with SIGTERM. Off the cooperative pool,
    // so that the stand-in keeps answering meanwhile.
    let run = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<CommandRun, any Error>) in
        DispatchQueue.global().async {
            continuation.resume(with: Result {
                try CommandRun.run("blerecv", ["--key", "\(d)/them", "--trust", "\(d)/trusted", "--out", d, "--no-l2cap"],
                                   environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address], timeout: 8)
            })
        }
    }
    await bluetoothd.connection.close()
    #expect(bluetoothd.calls.withLock { $0 }.contains("RegisterAdvertisement"), "it was waiting for senders: \(run.stderr)")
    #expect(run.status == 128 + SIGTERM, "\(run.stderr)")
    #expect(run.stderr.contains("interrupted: partial files kept for a resume"), "\(run.stderr)")
    #expect(!run.stderr.contains("\u{1B}") && !run.stderr.contains("\r"), "\(run.stderr.debugDescription)")
}

/// A refused sender hangs up once it has the refusal; with `--json` the line at the end of the
/// connection (`-v`) is the only word of it on standard error, and it must not say "link lost".
@Test func theEndOfARefusedConnectionSaysWhy() {
    let why = "refused a sender whose key is not trusted [7458 2d52 ef37 bcfd]"
    #expect(ReceiveReport.connectionEndedNote(.linkLost, refusal: why) == "connection ended: " + why)
    #expect(ReceiveReport.connectionEndedNote(.finished, refusal: why) == "connection ended: " + why)
    #expect(ReceiveReport.connectionEndedNote(.linkLost, refusal: nil) == "connection ended: link lost")
    #expect(ReceiveReport.connectionEndedNote(.finished, refusal: nil) == nil)
}

@Test func anEmptyBatchIsNotCalledAnEmptyDataMessage() {
    let batch = CLIError(receiving: .senderBrokeProtocol(.malformedMessage(.emptyBatch)), name: "f.bin from alice")
    let data = CLIError(receiving: .senderBrokeProtocol(.malformedMessage(.emptyData)), name: "f.bin from alice")
    #expect(batch.message.contains("an empty batch message"), "\(batch.message)")
    #expect(!batch.message.contains("data message"))
    #expect(batch.message != data.message)
    #expect(batch.status == .protocolViolation)
}

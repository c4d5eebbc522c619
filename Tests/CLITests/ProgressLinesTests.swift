import Logging
import Testing
import TestSupport
@testable import BlesendCLI

/// Issue 34: away from a terminal (a pipe, nohup, the journal) blesend and blerecv said nothing
/// for the whole transfer. Now: one plain line every 10 % or 30 s, whichever comes first.
@Suite struct ProgressLinesTests {
    /// One report to the throttle: at `seconds` after the start, `done` of `total`; `printed`: whether a line goes out.
    struct Row: Sendable, CustomTestStringConvertible {
        var seconds: Double
        var done: UInt64
        var printed: Bool
        var testDescription: String { "\(seconds) s \(done) B -> \(printed)" }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var total: UInt64?
        var rows: [Row]
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "10 % steps: the first report sets the start, a line as each tenth is crossed", total: 1_000, rows: [
            Row(seconds: 0, done: 0, printed: false), Row(seconds: 1, done: 50, printed: false),
            Row(seconds: 2, done: 100, printed: true), Row(seconds: 3, done: 150, printed: false),
            Row(seconds: 4, done: 199, printed: false), Row(seconds: 5, done: 200, printed: true),
            Row(seconds: 6, done: 450, printed: true), Row(seconds: 7, done: 480, printed: false),
        ]),
        Case(name: "30 s with no new tenth: a line anyway, then 30 s from that line", total: 1_000_000, rows: [
            Row(seconds: 0, done: 0, printed: false), Row(seconds: 29, done: 1_000, printed: false),
            Row(seconds: 30, done: 1_100, printed: true), Row(seconds: 45, done: 1_200, printed: false),
            Row(seconds: 59.9, done: 1_300, printed: false), Row(seconds: 60, done: 1_400, printed: true),
            Row(seconds: 61, done: 100_000, printed: true),
        ]),
        Case(name: "unknown size (standard input): every 30 s", total: nil, rows: [
            Row(seconds: 0, done: 0, printed: false), Row(seconds: 10, done: 500_000, printed: false),
            Row(seconds: 30, done: 900_000, printed: true), Row(seconds: 31, done: 5_000_000, printed: false),
            Row(seconds: 60, done: 6_000_000, printed: true),
        ]),
        Case(name: "100 % is printed once, however often it is reported", total: 1_000, rows: [
            Row(seconds: 0, done: 950, printed: false), Row(seconds: 1, done: 1_000, printed: true),
            Row(seconds: 2, done: 1_000, printed: false), Row(seconds: 40, done: 1_000, printed: false),
        ]),
        Case(name: "a file resumed at 40 % says 50 % next, not every tenth below it", total: 1_000, rows: [
            Row(seconds: 0, done: 400, printed: false), Row(seconds: 1, done: 450, printed: false),
            Row(seconds: 2, done: 500, printed: true), Row(seconds: 3, done: 600, printed: true),
        ]),
        Case(name: "the same name again after it finished (bytes go back): a new file", total: 1_000, rows: [
            Row(seconds: 0, done: 0, printed: false), Row(seconds: 1, done: 1_000, printed: true),
            Row(seconds: 60, done: 0, printed: false), Row(seconds: 61, done: 100, printed: true),
            Row(seconds: 62, done: 1_000, printed: true),
        ]),
        Case(name: "an empty file: 100 % at once", total: 0, rows: [
            Row(seconds: 0, done: 0, printed: true), Row(seconds: 1, done: 0, printed: false),
        ]),
        Case(name: "a step of several tenths at once: one line", total: 100, rows: [
            Row(seconds: 0, done: 0, printed: false), Row(seconds: 1, done: 70, printed: true),
            Row(seconds: 2, done: 79, printed: false),
        ]),
    ]

    @Test(arguments: cases) func throttle(_ test: Case) {
        let start = ContinuousClock.now
        var throttle = ProgressThrottle()
        for row in test.rows {
            let now = start + .milliseconds(Int64(row.seconds * 1000))
            #expect(throttle.shouldPrint(done: row.done, total: test.total, now: now) == row.printed, "\(row.testDescription)")
        }
    }

    final class Captured: @unchecked Sendable {
        var text = ""
        var now = ContinuousClock.now
    }

    /// The real reporter, standard error not a terminal, through a 1 MiB transfer at a steady
    /// 40 kB/s in 4 KiB steps (as `SendOperation` reports it, with the 100 % at the end twice).
    static func simulate(_ options: Reporter.Options, peer: String? = nil, terminal: Bool = false, total: UInt64 = 1 << 20) -> String {
        let captured = Captured()
        let reporter = Reporter(options: options, logger: Logger(label: "test"), writeError: { captured.text += $0 },
                                terminal: terminal, clock: { captured.now })
        let start = captured.now
        var done: UInt64 = 0
        while done < total {
            done = min(total, done + 4_096)
            captured.now += .milliseconds(100)
            reporter.progress(name: "report.pdf", peer: peer, done: done, total: total, startedAt: start, startOffset: 0)
        }
        reporter.progress(name: "report.pdf", peer: peer, done: total, total: total, startedAt: start, startOffset: 0)
        return captured.text
    }

    @Test func offATerminalA1MiBFileGivesPlainLines() {
        let text = Self.simulate(.init(tool: "blesend"))
        let lines = text.split(separator: "\n")
        #expect((5...12).contains(lines.count), "\(text)")
        #expect(!text.contains("\u{1B}") && !text.contains("\r"), "no control codes: \(text)")
        #expect(lines.allSatisfy { $0.hasPrefix("blesend: report.pdf ") }, "\(text)")
        #expect(lines.first == "blesend: report.pdf 10 % (104.0 KiB of 1.0 MiB) 41.0 kB/s ETA 0:23", "\(text)")
        #expect(lines.last == "blesend: report.pdf 100 % (1.0 MiB of 1.0 MiB) 41.0 kB/s", "\(text)")
        #expect(lines.filter { $0.contains(" 100 % ") }.count == 1)
    }

    @Test func theReceiverNamesTheSender() {
        let lines = Self.simulate(.init(tool: "blerecv"), peer: "alice").split(separator: "\n")
        #expect((5...12).contains(lines.count))
        #expect(lines.allSatisfy { $0.hasPrefix("blerecv: report.pdf from alice ") }, "\(lines)")
    }

    /// A slow link: 1 MiB at about 4 kB/s takes over 4 minutes; the 30 s rule adds lines between tenths.
    @Test func aSlowLinkStillSaysSomethingEvery30Seconds() {
        let captured = Captured()
        let reporter = Reporter(options: .init(tool: "blesend"), logger: Logger(label: "test"), writeError: { captured.text += $0 },
                                terminal: false, clock: { captured.now })
        let start = captured.now
        let total: UInt64 = 4_000_000
        for step in 1...1_000 {
            captured.now += .seconds(1)
            reporter.progress(name: "big.iso", done: UInt64(step) * 4_000, total: total, startedAt: start, startOffset: 0)
        }
        // 1000 s: every 30 s (33 lines), and the tenths that fall between them.
        let count = captured.text.split(separator: "\n").count
        #expect((33...45).contains(count), "\(captured.text)")
    }

    /// `--quiet` and `--json` keep standard error free of progress under `auto`, and show it with
    /// `always`; `never` shows none; a terminal gets the bar, not the lines.
    @Test(arguments: [
        (Reporter.Options(quiet: true, tool: "blesend"), false, 0...0),
        (Reporter.Options(json: true, tool: "blesend"), false, 0...0),
        (Reporter.Options(quiet: true, tool: "blesend", progress: .always), false, 5...12),
        (Reporter.Options(json: true, tool: "blesend", progress: .always), false, 5...12),
        (Reporter.Options(tool: "blesend", progress: .never), false, 0...0),
        (Reporter.Options(quiet: true, tool: "blesend", progress: .never), false, 0...0),
    ] as [(Reporter.Options, Bool, ClosedRange<Int>)])
    func modes(_ options: Reporter.Options, _ terminal: Bool, _ lines: ClosedRange<Int>) {
        let text = Self.simulate(options, terminal: terminal)
        #expect(lines.contains(text.split(separator: "\n").count), "\(text)")
    }

    @Test func aTerminalGetsTheBarNotTheLines() {
        let text = Self.simulate(.init(tool: "blesend"), terminal: true)
        #expect(text.contains("\r\u{1B}[2K") && !text.contains("\n"), "\(text.prefix(200))")
        #expect(Self.simulate(.init(tool: "blesend", progress: .never), terminal: true).isEmpty)
    }
}

/// `--progress` is an option of both transfer commands, refused with anything but its three values.
@Test(arguments: ["blesend", "blerecv"]) func progressOptionIsParsedAndDocumented(_ tool: String) throws {
    let help = tool == "blesend" ? try blesend(["send", "--help"]) : try blerecv(["receive", "--help"])
    #expect(help.stdout.contains("--progress <auto|always|never>") && help.stdout.contains("every 10 % or 30 s"), "\(help.stdout)")
    let wrong = tool == "blesend" ? try blesend(["--progress", "sometimes", "--to", "x.pub", "f"]) : try blerecv(["--progress", "sometimes"])
    #expect(wrong.status == ExitStatus.usage.rawValue, "\(wrong.stderr)")
}

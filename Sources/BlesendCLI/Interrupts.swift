#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Storage
import Synchronization

/// Ctrl-C, SIGTERM, and SIGHUP on a terminal (the terminal went away): remove partial files
/// (those not kept for a resume across runs), release BlueZ objects, exit with the documented code
/// (130, 143, 129). Off a terminal blerecv's SIGHUP reloads its trust instead (ReloadSignal).
final class Interrupts: Sendable {
    static let shared = Interrupts()

    private let cleanups = Mutex<[Int: @Sendable () async -> Void]>([:])
    private let nextID = Mutex(0)
    private let interrupting = Mutex(false)

    /// True once SIGINT/SIGTERM arrived: the process is about to exit, and errors caused by the
    /// clean-up (a closed peripheral, a closed link) are not worth reporting.
    var isInterrupting: Bool { interrupting.withLock { $0 } }
    /// Kept alive for the life of the process; written once, from `install`.
    nonisolated(unsafe) private static var sources: [any DispatchSourceSignal] = []

    /// Registers work to do on an interrupt; returns a token for `remove`.
    @discardableResult
    func add(_ cleanup: @escaping @Sendable () async -> Void) -> Int {
        let id = nextID.withLock { n in
            n += 1
            return n
        }
        cleanups.withLock { $0[id] = cleanup }
        return id
    }

    func remove(_ id: Int) { cleanups.withLock { $0[id] = nil } }

    /// Installs the handlers (once per process).
    func install() {
        guard Self.sources.isEmpty else { return }
        for signalNumber in Self.handledSignals(onTerminal: !ReloadSignal.applies) {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { [self] in handle(signalNumber) }
            source.resume()
            Self.sources.append(source)
        }
    }

    /// The signals handled here: SIGHUP only where it means the terminal went away.
    static func handledSignals(onTerminal: Bool) -> [Int32] {
        onTerminal ? [SIGINT, SIGTERM, SIGHUP] : [SIGINT, SIGTERM]
    }

    /// The documented exit status for a signal handled here.
    static func status(for signalNumber: Int32) -> ExitStatus {
        switch signalNumber {
        case SIGTERM: .terminated
        case SIGHUP: .hungUp
        default: .interrupted
        }
    }

    /// Whether partial files outlive the process (blerecv's `--keep-partials`): an interrupt then
    /// leaves them, as their last sync left them, for a resume.
    private let partialsKept = Mutex(false)

    func keepPartials() { partialsKept.withLock { $0 = true } }

    /// Whether the run writes `--json` events (set by OutputOptions): an interrupt then also writes
    /// an `error` event (`interrupted` or `terminated`) on stdout before the process exits.
    private let json = Mutex(false)

    func writeJSON() { json.withLock { $0 = true } }

    /// What an interrupt says happened to the run's work, when it is not files (pairing).
    private let outcome = Mutex<String?>(nil)

    func sayOnInterrupt(_ text: String) { outcome.withLock { $0 = text } }

    /// What an interrupt prints on standard error: on a terminal it first clears a progress line
    /// that may be drawn there; anywhere else (a log, a pipe, the journal) no control codes.
    static func interruptedLine(standardErrorIsTerminal: Bool, partialsKept: Bool = false, outcome: String? = nil) -> String {
        (standardErrorIsTerminal ? "\r\u{1B}[2K" : "")
            + "interrupted: " + (outcome ?? (partialsKept ? "partial files kept for a resume" : "partial files removed")) + "\n"
    }

    /// The `error` event an interrupt writes with `--json`: code `interrupted` (SIGINT),
    /// `terminated` (SIGTERM) or `hung-up` (SIGHUP on a terminal), and what became of the work, as
    /// on standard error.
    static func errorEvent(signal signalNumber: Int32, partialsKept: Bool = false, outcome: String? = nil) -> JSONLine {
        let status = status(for: signalNumber)
        let what = outcome ?? (partialsKept ? "partial files kept for a resume" : "partial files removed")
        return JSONLine.error(status, message: status.summary + ": " + what, hint: nil)
    }

    private func handle(_ signalNumber: Int32) {
        interrupting.withLock { $0 = true }
        // Files first: they must not survive even if BlueZ hangs.
        OpenTemporaries.shared.removeAll()
        let work = cleanups.withLock { Array($0.values) }
        let kept = partialsKept.withLock { $0 }
        let said = outcome.withLock { $0 }
        if json.withLock({ $0 }) { Console.out(Self.errorEvent(signal: signalNumber, partialsKept: kept, outcome: said).text + "\n") }
        Console.err(Self.interruptedLine(standardErrorIsTerminal: isatty(2) == 1, partialsKept: kept, outcome: said))
        let done = DispatchSemaphore(value: 0)
        Task {
            await withTaskGroup(of: Void.self) { group in
                for cleanup in work { group.addTask { await cleanup() } }
            }
            done.signal()
        }
        _ = done.wait(timeout: .now() + 2)
        exit(Self.status(for: signalNumber).rawValue)
    }
}

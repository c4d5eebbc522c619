#if canImport(Glibc)
import Glibc
#endif
import Dispatch

/// SIGHUP (`systemctl reload blerecv`): instead of ending the process, runs a handler. blerecv's
/// handler makes the trust directory be read again before the next handshake, whatever its
/// state (it is read again anyway whenever it changes); its other options are its command line,
/// which only a restart changes, and a restart keeps partial files for a resume.
///
/// Only for a process with no terminal (a service: standard input and error are not terminals).
/// On a terminal SIGHUP means the terminal went away, and the process ends as before.
enum ReloadSignal {
    /// Kept alive for the life of the process; written once, from `install`.
    nonisolated(unsafe) private static var source: (any DispatchSourceSignal)?

    static var applies: Bool { isatty(0) == 0 && isatty(2) == 0 }

    static func install(_ handler: @escaping @Sendable () -> Void) {
        guard source == nil, applies else { return }
        signal(SIGHUP, SIG_IGN)
        let signalSource = DispatchSource.makeSignalSource(signal: SIGHUP, queue: .global())
        signalSource.setEventHandler(handler: handler)
        signalSource.resume()
        source = signalSource
    }
}

#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Durable

/// A tool's history in its state folder (`HistoryJournal`: `history-sent` for blesend,
/// `history-received` for blerecv), and the entries it adds. A history that cannot be opened or
/// written is said once and otherwise left: it never fails a transfer.
///
/// blerecv writes it on a queue of its own (`inBackground`): each entry is synced, and its
/// receiver server's one thread must not wait for that beside the other senders. `flush` waits
/// for what is queued.
final class History: @unchecked Sendable {
    static let sentName = "history-sent"
    static let receivedName = "history-received"

    private let journal: HistoryJournal?
    private let folder: String
    private let reporter: Reporter
    private var warned = false
    /// Where entries are written, in order (nil: on the caller's thread).
    private let queue: DispatchQueue?

    init(folder: String, name: String, reporter: Reporter, inBackground: Bool = false) {
        self.folder = folder
        self.reporter = reporter
        queue = inBackground ? DispatchQueue(label: "blesend.history") : nil
        do {
            journal = try HistoryJournal(disk: try PosixDisk(folder: folder), name: name)
        } catch {
            journal = nil
            warn(error)
        }
    }

    /// Seconds since 1970, now.
    static var now: UInt64 { UInt64(max(0, time(nil))) }

    func record(_ entry: HistoryEntry) {
        guard journal != nil else { return }
        guard let queue else { return write(entry) }
        queue.async { self.write(entry) }
    }

    /// Waits until every entry recorded so far is written.
    func flush() {
        queue?.sync {}
    }

    private func write(_ entry: HistoryEntry) {
        do { try journal?.append(entry) } catch { warn(error) }
    }

    private func warn(_ error: any Error) {
        guard !warned else { return }
        warned = true
        reporter.logger.warning("the history in \(folder) cannot be kept (\(error)); transfers go on without it")
    }
}

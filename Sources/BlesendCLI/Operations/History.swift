#if canImport(Glibc)
import Glibc
#endif
import Durable

/// A tool's history in its state folder (`HistoryJournal`: `history-sent` for blesend,
/// `history-received` for blerecv), and the entries it adds. A history that cannot be opened or
/// written is said once and otherwise left: it never fails a transfer.
final class History: @unchecked Sendable {
    static let sentName = "history-sent"
    static let receivedName = "history-received"

    private let journal: HistoryJournal?
    private let folder: String
    private let reporter: Reporter
    private var warned = false

    init(folder: String, name: String, reporter: Reporter) {
        self.folder = folder
        self.reporter = reporter
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
        guard let journal else { return }
        do { try journal.append(entry) } catch { warn(error) }
    }

    private func warn(_ error: any Error) {
        guard !warned else { return }
        warned = true
        reporter.logger.warning("the history in \(folder) cannot be kept (\(error)); transfers go on without it")
    }
}

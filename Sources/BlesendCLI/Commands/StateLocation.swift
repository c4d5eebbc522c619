import Handshake
import Keys
import Durable

/// Where blerecv keeps what must survive a restart (the replay guard): `--state`, else the first
/// folder of `$STATE_DIRECTORY` (systemd's StateDirectory=, `/var/lib/blesend` under the
/// package's unit), else `$XDG_STATE_HOME/blesend`, else `~/.local/state/blesend`.
enum StateLocation {
    static func folder(_ option: String?, environment: (String) -> String? = KeyLocation.environment) -> String {
        if let option { return option }
        if let systemd = environment("STATE_DIRECTORY")?.split(separator: ":").first, !systemd.isEmpty { return String(systemd) }
        if let xdg = environment("XDG_STATE_HOME"), !xdg.isEmpty { return xdg + "/blesend" }
        return (environment("HOME") ?? ".") + "/.local/state/blesend"
    }

    /// The completed transfers of the receiver with `identity` in `folder`; nil (said, not fatal)
    /// when they cannot be kept there: a file stored just before a restart may then be stored twice.
    static func completedJournal(in folder: String, for identity: Identity, reporter: Reporter) -> CompletedJournal? {
        do {
            let journal = try CompletedJournal(disk: try PosixDisk(folder: folder), name: "completed-\(identity.publicKey.fileTag)")
            if journal.replacedUnreadable {
                reporter.logger.warning("the completed transfers in \(folder) did not read (damaged, or not blesend's): replaced by an empty list")
            }
            return journal
        } catch {
            reporter.logger.warning("cannot keep completed transfers in \(folder) (\(error)); a file stored just before a restart may be stored again")
            return nil
        }
    }

    /// The replay journal of the receiver with `identity` in `folder` (one per receiver key, so
    /// that receivers with different keys may share a folder).
    static func replayJournal(in folder: String, for identity: Identity) throws(CLIError) -> ReplayJournal {
        do {
            return try ReplayJournal(disk: try PosixDisk(folder: folder), name: "replay-\(identity.publicKey.fileTag)")
        } catch {
            throw CLIError(.localIO, "cannot keep the replay guard in \(folder): \(error)",
                           hint: "give a folder this user may write with --state DIR")
        }
    }
}

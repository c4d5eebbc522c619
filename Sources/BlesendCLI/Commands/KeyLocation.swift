#if canImport(Glibc)
import Glibc
#endif
import Keys

/// Where a tool's own secret key lives unless `--key` says otherwise:
/// `$XDG_CONFIG_HOME/blesend/id`, else `~/.config/blesend/id`.
enum KeyLocation {
    static var defaultDirectory: String {
        if let xdg = environment("XDG_CONFIG_HOME"), !xdg.isEmpty { return xdg + "/blesend" }
        return (environment("HOME") ?? ".") + "/.config/blesend"
    }

    static var defaultPath: String { defaultDirectory + "/id" }

    static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    static func loadIdentity(_ path: String?) throws(CLIError) -> Identity {
        do {
            return try KeyFile.loadIdentity(path: path ?? defaultPath)
        } catch {
            throw CLIError(error)
        }
    }
}

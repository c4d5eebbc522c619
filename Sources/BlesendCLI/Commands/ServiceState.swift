#if canImport(Glibc)
import Glibc
#endif

/// The state of the packaged service (`blerecv.service`: user blesend, `StateDirectory=blesend
/// blesend/incoming`), which `history` and `partials` run as another user cannot show: they say
/// that it is there rather than show nothing. The probes are injected so that tests can play a
/// folder another user owns (the tests run as root, who reads everything).
struct ServiceState: Sendable {
    /// The unit's state folder.
    var folder = "/var/lib/blesend"
    /// Whether a path exists (a symlink counts; it is not followed).
    var exists: @Sendable (String) -> Bool = ServiceState.pathExists
    /// Whether this user may list and read in a folder.
    var readable: @Sendable (String) -> Bool = { access($0, R_OK | X_OK) == 0 }

    /// Its output folder.
    var incoming: String { folder + "/incoming" }

    static let package = ServiceState()

    static func pathExists(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0
    }

    /// The same folder, whatever its spelling (`/var/lib/blesend/`, a relative path to it).
    static func same(_ a: String, _ b: String) -> Bool {
        func resolved(_ path: String) -> String {
            guard let real = realpath(path, nil) else { return path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path }
            defer { free(real) }
            return String(cString: real)
        }
        return resolved(a) == resolved(b)
    }

    /// The line for `tool` about the service's state when the user looked at `own` instead:
    /// nil when `own` is the service's, or the service keeps nothing here. `look`: the folder of
    /// the service's to look in (its state or its incoming); `count`: how many of `what` it holds
    /// (nil: some, not counted); `command`: how to see them.
    func note(tool: String, own: String, look: String, what: (one: String, many: String), count: () -> Int?,
              command: String) -> String? {
        guard !Self.same(own, look), exists(folder) else { return nil }
        guard readable(folder), !exists(look) || readable(look) else {
            return "\(tool): the service's state in \(folder) is not readable by you: run as blesend or with sudo (\(command))"
        }
        let count = count()
        if count == 0 { return nil }
        guard let count else {
            return "\(tool): the \(what.many) in \(look) belong to the service: run as blesend or with sudo (\(command))"
        }
        let things = count == 1 ? "\(what.one) belongs" : "\(what.many) belong"
        return "\(tool): \(count) \(things) to the service (\(look)): run as blesend or with sudo (\(command))"
    }
}

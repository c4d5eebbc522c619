/// Where a running blerecv answers `blerecv status` (an `AF_UNIX` stream socket), in one place:
///
/// - `$RUNTIME_DIRECTORY/status.sock` under systemd (blerecv.service: `RuntimeDirectory=blesend`,
///   `/run/blesend`, mode 0750: the user and group blesend; `sudo -u blesend blerecv status`, or
///   a member of group blesend);
/// - else `$XDG_RUNTIME_DIR/blesend/status.sock` (the user's own, 0700);
/// - a client with neither also tries the service's, `/run/blesend/status.sock`.
enum StatusSocketPath {
    static let fileName = "status.sock"
    static let service = "/run/blesend/" + fileName

    /// Where a receiver serves its status (its folder, made 0700 if missing, and the socket);
    /// nil when it has no runtime directory.
    static func serving(environment: (String) -> String? = KeyLocation.environment) -> (folder: String, path: String)? {
        if let runtime = environment("RUNTIME_DIRECTORY")?.split(separator: ":").first, !runtime.isEmpty {
            return (String(runtime), String(runtime) + "/" + fileName)
        }
        if let xdg = environment("XDG_RUNTIME_DIR"), !xdg.isEmpty {
            return (xdg + "/blesend", xdg + "/blesend/" + fileName)
        }
        return nil
    }

    /// Where `blerecv status` looks, in order.
    static func candidates(environment: (String) -> String? = KeyLocation.environment) -> [String] {
        var paths: [String] = []
        if let own = serving(environment: environment)?.path { paths.append(own) }
        if !paths.contains(service) { paths.append(service) }
        return paths
    }
}

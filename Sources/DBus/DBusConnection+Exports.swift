import CDBus
import Glibc

/// Exported objects: method calls from the bus to a path we export, answered by its handler.
extension DBusConnection {
    /// Routes method calls for `path` (and, with `subtree`, every path below it) to `handler`.
    ///
    /// With `transfersFDs`, unix fds in the handler's reply are owned by the connection: they are
    /// closed once the reply has been sent (libdbus sends duplicates), so a handler can return one end
    /// of a fresh socketpair without keeping track of it.
    public func export(
        path: String, subtree: Bool = false, transfersFDs: Bool = false, handler: @escaping DBusMethodHandler
    ) throws(DBusError) {
        try DBusNames.check(path, .objectPath)
        exports[path] = (subtree, transfersFDs, handler)
    }

    public func unexport(path: String) {
        exports.removeValue(forKey: path)
    }

    /// An incoming method call: to its path's handler, whose result becomes the reply.
    func handleMethodCall(_ msg: OpaquePointer) -> Bool {
        guard let path = dbus_message_get_path(msg).map({ String(cString: $0) }),
              let (transfersFDs, handler) = exportedHandler(for: path) else { return false }
        let token = takeToken()
        dbus_message_ref(msg)
        incoming[token] = msg
        let message: DBusMessage
        do {
            message = try DBusMessage(raw: msg)
        } catch {
            finishIncoming(token, .failure(DBusErrorReply.invalidArgs("\(error)")))
            return true
        }
        Task { [weak self] in
            let result: Result<[DBusValue], any Error>
            do { result = .success(try await handler(message)) } catch { result = .failure(error) }
            await self?.finishIncoming(token, result)
            if transfersFDs, case .success(let values) = result { closeUnixFDs(values) }
        }
        return true
    }

    private func exportedHandler(for path: String) -> (transfersFDs: Bool, handler: DBusMethodHandler)? {
        if let e = exports[path] { return (e.transfersFDs, e.handler) }
        var p = path
        while let slash = p.lastIndex(of: "/") {
            p = slash == p.startIndex ? "/" : String(p[..<slash])
            if let e = exports[p], e.subtree { return (e.transfersFDs, e.handler) }
            if p == "/" { break }
        }
        return nil
    }

    private func finishIncoming(_ token: UInt64, _ result: Result<[DBusValue], any Error>) {
        guard let msg = incoming.removeValue(forKey: token) else {
            return
        }
        defer { dbus_message_unref(msg) }
        guard dbus_message_get_no_reply(msg) == 0, let raw, connected else { return }
        var reply: OpaquePointer?
        switch result {
        case .success(let values):
            if !canPassUnixFDs, values.contains(where: \.containsUnixFD) {
                reply = makeError(msg, .failed("unix fd passing not supported on this connection"))
            } else if let r = dbus_message_new_method_return(msg) {
                do {
                    try MessageWriter.append(values, to: r)
                    reply = r
                } catch {
                    dbus_message_unref(r)
                    reply = makeError(msg, .failed("cannot marshal reply: \(error)"))
                }
            }
        case .failure(let error):
            let e = error as? DBusErrorReply ?? .failed("\(error)")
            reply = makeError(msg, e)
        }
        guard let reply else { return }
        defer { dbus_message_unref(reply) }
        _ = dbus_connection_send(raw, reply, nil)
        dbus_connection_flush(raw)
        scheduleDispatch()
    }

    private func makeError(_ msg: OpaquePointer, _ e: DBusErrorReply) -> OpaquePointer? {
        let name = DBusNames.isValidErrorName(e.name) ? e.name : "org.freedesktop.DBus.Error.Failed"
        let text = e.message.utf8.contains(0) ? "" : e.message
        return name.withCString { n in text.withCString { t in dbus_message_new_error(msg, n, t) } }
    }
}

/// Closes every unix fd found in `values` (recursively).
public func closeUnixFDs(_ values: [DBusValue]) {
    for v in values {
        switch v {
        case .unixFD(let fd): Glibc.close(fd)
        case .array(_, let items): closeUnixFDs(items)
        case .dictionary(_, _, let entries): closeUnixFDs(entries.flatMap { [$0.key, $0.value] })
        case .structure(let fields): closeUnixFDs(fields)
        case .variant(let inner): closeUnixFDs([inner])
        default: break
        }
    }
}

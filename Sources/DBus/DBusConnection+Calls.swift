import CDBus
import Dispatch
import Glibc

/// Calls and signals we send.
extension DBusConnection {
    /// Queues `msg` on the connection and flushes it; its serial.
    private func send(_ msg: OpaquePointer) throws(DBusError) -> UInt32 {
        guard let raw, connected else { throw DBusError.disconnected }
        var serial: UInt32 = 0
        guard dbus_connection_send(raw, msg, &serial) != 0 else { throw DBusError.outOfMemory }
        dbus_connection_flush(raw)
        scheduleDispatch()
        if dbus_connection_get_is_connected(raw) == 0 {
            teardown()
            throw DBusError.disconnected
        }
        return serial
    }

    /// Calls a method and waits for its reply (`timeout` counts from sending).
    public func call(
        destination: String?, path: String, interface: String?, member: String,
        arguments: [DBusValue] = [], timeout: Duration = .seconds(25)
    ) async throws(DBusError) -> [DBusValue] {
        let created = try makeMethodCall(destination: destination, path: path, interface: interface, member: member)
        defer { dbus_message_unref(created) }
        if !canPassUnixFDs, arguments.contains(where: \.containsUnixFD) { throw DBusError.unixFDNotSupported }
        guard raw != nil, connected else { throw DBusError.disconnected }
        let msg = UncheckedMessage(raw: created)
        try MessageWriter.append(arguments, to: created)

        let token = takeToken()
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (cont: CheckedContinuation<[DBusValue], any Error>) in
                    do {
                        let serial = try send(msg.raw)
                        pending[serial] = PendingCall(token: token, continuation: cont)
                        let (s, atto) = timeout.components
                        let nanos = max(0, Int(s) * 1_000_000_000 + Int(atto / 1_000_000_000))
                        executor.queue.asyncAfter(deadline: .now() + .nanoseconds(nanos)) { [weak self] in
                            self?.assumeIsolated { $0.failPending(token: token, with: .timeout) }
                        }
                    } catch {
                        cont.resume(throwing: error)
                    }
                }
            } onCancel: {
                Task { [weak self] in await self?.failPending(token: token, with: .cancelled) }
            }
        } catch let error as DBusError {
            throw error
        } catch {
            throw DBusError.cancelled
        }
    }

    /// Calls a method without asking for a reply (`NO_REPLY_EXPECTED`): the call is on its way
    /// (flushed to the bus) when this returns, and nothing waits for the method to finish.
    public func callWithoutReply(
        destination: String?, path: String, interface: String?, member: String, arguments: [DBusValue] = []
    ) throws(DBusError) {
        let msg = try makeMethodCall(destination: destination, path: path, interface: interface, member: member)
        defer { dbus_message_unref(msg) }
        if !canPassUnixFDs, arguments.contains(where: \.containsUnixFD) { throw DBusError.unixFDNotSupported }
        dbus_message_set_no_reply(msg, 1)
        try MessageWriter.append(arguments, to: msg)
        _ = try send(msg)
    }

    private func failPending(token: UInt64, with error: DBusError) {
        guard let entry = pending.first(where: { $0.value.token == token }) else { return }
        pending.removeValue(forKey: entry.key)
        entry.value.continuation.resume(throwing: error)
    }

    /// Emits a signal.
    public func emitSignal(
        path: String, interface: String, member: String, arguments: [DBusValue] = [], destination: String? = nil
    ) throws(DBusError) {
        try DBusNames.check(path, .objectPath)
        try DBusNames.check(interface, .interface)
        try DBusNames.check(member, .member)
        if let destination { try DBusNames.check(destination, .busName) }
        let created = path.withCString { p in
            interface.withCString { i in member.withCString { m in dbus_message_new_signal(p, i, m) } }
        }
        guard let msg = created else { throw DBusError.outOfMemory }
        defer { dbus_message_unref(msg) }
        if let destination {
            _ = destination.withCString { dbus_message_set_destination(msg, $0) }
        }
        try MessageWriter.append(arguments, to: msg)
        _ = try send(msg)
    }

    /// A new method call message (the caller unrefs it).
    private func makeMethodCall(destination: String?, path: String, interface: String?, member: String) throws(DBusError) -> OpaquePointer {
        if let destination { try DBusNames.check(destination, .busName) }
        try DBusNames.check(path, .objectPath)
        if let interface { try DBusNames.check(interface, .interface) }
        try DBusNames.check(member, .member)
        let created = path.withCString { p in
            member.withCString { m in
                withOptionalCString(destination) { d in
                    withOptionalCString(interface) { i in dbus_message_new_method_call(d, p, i, m) }
                }
            }
        }
        guard let created else { throw DBusError.outOfMemory }
        return created
    }
}

private func withOptionalCString<R>(_ s: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
    guard let s else { return body(nil) }
    return s.withCString { body($0) }
}

import CDBus
@preconcurrency import Dispatch
import Glibc

/// Which bus to connect to.
public enum DBusBus: Sendable, Equatable {
    /// `DBUS_SYSTEM_BUS_ADDRESS`, or `unix:path=/run/dbus/system_bus_socket`.
    case system
    /// `DBUS_SESSION_BUS_ADDRESS`.
    case session
    /// An explicit address such as `unix:path=/tmp/x/bus`.
    case address(String)

    /// The address a connection to this bus would use.
    public func resolve() throws(DBusError) -> String {
        switch self {
        case .system:
            if let a = getenv("DBUS_SYSTEM_BUS_ADDRESS") { return String(cString: a) }
            return "unix:path=/run/dbus/system_bus_socket"
        case .session:
            guard let a = getenv("DBUS_SESSION_BUS_ADDRESS") else {
                throw DBusError.connectionFailed(name: "org.freedesktop.DBus.Error.NoServer", message: "DBUS_SESSION_BUS_ADDRESS is not set")
            }
            return String(cString: a)
        case .address(let a):
            return a
        }
    }
}

/// Handles method calls to an exported object path. Return the reply's arguments, or throw
/// `DBusErrorReply` for a D-Bus error reply (any other error becomes `org.freedesktop.DBus.Error.Failed`).
public typealias DBusMethodHandler = @Sendable (DBusMessage) async throws -> [DBusValue]

/// A private connection to a message bus (never shared, never exits the process on disconnect).
///
/// All libdbus state lives in this actor; its executor is the dispatch queue that watches the
/// connection's socket, so incoming replies, signals and method calls are handled in order.
/// `close()` (or the bus going away) fails every outstanding call with `DBusError.disconnected`.
public actor DBusConnection {
    private let executor: SerialQueueExecutor
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// The unique name the bus gave this connection (":1.42").
    public nonisolated let uniqueName: String
    /// Whether unix fds (type `h`) can be sent and received on this connection.
    public nonisolated let canPassUnixFDs: Bool

    private var raw: OpaquePointer?
    private var connected = true
    private var readSource: (any DispatchSourceRead)?
    private var dispatchScheduled = false
    private var filterInstalled = false

    private struct PendingCall {
        var token: UInt64
        var continuation: CheckedContinuation<[DBusValue], any Error>
    }
    private var pending: [UInt32: PendingCall] = [:]
    private var subscriptions: [UInt64: (rule: DBusMatchRule, deliver: (DBusMessage) -> Void, finish: () -> Void)] = [:]
    private var exports: [String: (subtree: Bool, transfersFDs: Bool, handler: DBusMethodHandler)] = [:]
    private var incoming: [UInt64: OpaquePointer] = [:]
    private var nextToken: UInt64 = 1

    // MARK: Opening and closing

    /// Opens a private connection and registers on the bus (`Hello`).
    public static func connect(_ bus: DBusBus) async throws(DBusError) -> DBusConnection {
        let address = try bus.resolve()
        let result: Result<DBusConnection, DBusError> = await withCheckedContinuation { cont in
            DispatchQueue.global().async {
                cont.resume(returning: Result { () throws(DBusError) in try open(address) })
            }
        }
        let connection = try result.get()
        await connection.start()
        return connection
    }

    private static func open(_ address: String) throws(DBusError) -> DBusConnection {
        var err = CDBus.DBusError()
        dbus_error_init(&err)
        guard let conn = address.withCString({ dbus_connection_open_private($0, &err) }) else {
            throw takeError(&err, fallback: "cannot connect to \(address)")
        }
        dbus_connection_set_exit_on_disconnect(conn, 0)
        guard dbus_bus_register(conn, &err) != 0 else {
            let e = takeError(&err, fallback: "Hello failed")
            dbus_connection_close(conn)
            dbus_connection_unref(conn)
            throw e
        }
        let unique = dbus_bus_get_unique_name(conn).map { String(cString: $0) } ?? ""
        let fds = dbus_connection_can_send_type(conn, DBusTypeCode.unixFD) != 0
        return DBusConnection(raw: conn, uniqueName: unique, canPassUnixFDs: fds)
    }

    private static func takeError(_ err: inout CDBus.DBusError, fallback: String) -> DBusError {
        defer { dbus_error_free(&err) }
        guard dbus_error_is_set(&err) != 0 else {
            return .connectionFailed(name: "org.freedesktop.DBus.Error.Failed", message: fallback)
        }
        return .connectionFailed(
            name: err.name.map { String(cString: $0) } ?? "org.freedesktop.DBus.Error.Failed",
            message: err.message.map { String(cString: $0) } ?? fallback)
    }

    private init(raw: OpaquePointer, uniqueName: String, canPassUnixFDs: Bool) {
        self.executor = SerialQueueExecutor(label: "dbus.\(uniqueName)")
        self.raw = raw
        self.uniqueName = uniqueName
        self.canPassUnixFDs = canPassUnixFDs
    }

    isolated deinit {
        readSource?.cancel()
        if let raw {
            if filterInstalled {
                dbus_connection_remove_filter(raw, messageFilter, Unmanaged.passUnretained(self).toOpaque())
            }
            for (_, msg) in incoming { dbus_message_unref(msg) }
            dbus_connection_close(raw)
            dbus_connection_unref(raw)
        }
    }

    private func start() {
        guard let raw else { return }
        if dbus_connection_add_filter(raw, messageFilter, Unmanaged.passUnretained(self).toOpaque(), nil) != 0 {
            filterInstalled = true
        }
        var fd: Int32 = -1
        if dbus_connection_get_unix_fd(raw, &fd) != 0, fd >= 0 {
            let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: executor.queue)
            source.setEventHandler { [weak self] in
                self?.assumeIsolated { $0.pump() }
            }
            source.resume()
            readSource = source
        }
        scheduleDispatch()
    }

    /// Whether the connection is still usable.
    public var isConnected: Bool { connected && raw != nil }

    /// Closes the connection. Outstanding calls throw `DBusError.disconnected`; signal streams finish.
    public func close() {
        guard let raw else { return }
        teardown()
        if filterInstalled {
            dbus_connection_remove_filter(raw, messageFilter, Unmanaged.passUnretained(self).toOpaque())
            filterInstalled = false
        }
        for (_, msg) in incoming { dbus_message_unref(msg) }
        incoming.removeAll()
        dbus_connection_close(raw)
        dbus_connection_unref(raw)
        self.raw = nil
    }

    /// Stops watching the socket and fails everything waiting on this connection.
    private func teardown() {
        connected = false
        readSource?.cancel()
        readSource = nil
        let calls = pending
        pending.removeAll()
        for (_, call) in calls { call.continuation.resume(throwing: DBusError.disconnected) }
        let subs = subscriptions
        subscriptions.removeAll()
        for (_, sub) in subs { sub.finish() }
    }

    // MARK: The loop

    private func pump() {
        guard let raw, connected else { return }
        _ = dbus_connection_read_write(raw, 0)
        dispatchAll()
    }

    private func dispatchAll() {
        dispatchScheduled = false
        guard let raw, connected else { return }
        while dbus_connection_dispatch(raw) == DBUS_DISPATCH_DATA_REMAINS {}
        if dbus_connection_get_is_connected(raw) == 0 { teardown() }
    }

    /// libdbus may read messages into its queue while flushing; dispatch them on a later turn
    /// (never from inside a dispatch, which libdbus does not allow).
    private func scheduleDispatch() {
        guard !dispatchScheduled else { return }
        dispatchScheduled = true
        executor.queue.async { [weak self] in
            self?.assumeIsolated { $0.dispatchAll() }
        }
    }

    /// Called by libdbus (from `dbus_connection_dispatch`, on this actor's queue) for every message.
    fileprivate func handle(_ msg: OpaquePointer) -> Bool {
        switch dbus_message_get_type(msg) {
        case DBusMessageTypeCode.methodReturn, DBusMessageTypeCode.error:
            let replySerial = dbus_message_get_reply_serial(msg)
            guard let call = pending.removeValue(forKey: replySerial) else { return false }
            do {
                let message = try DBusMessage(raw: msg)
                if message.kind == .error {
                    for case .unixFD(let fd) in message.arguments { Glibc.close(fd) }
                    let text = message.arguments.first?.string ?? ""
                    call.continuation.resume(throwing: DBusError.remote(
                        DBusRemoteError(name: message.errorName ?? "org.freedesktop.DBus.Error.Failed", message: text)))
                } else {
                    call.continuation.resume(returning: message.arguments)
                }
            } catch {
                call.continuation.resume(throwing: error)
            }
            return true
        case DBusMessageTypeCode.signal:
            guard !subscriptions.isEmpty, let message = try? DBusMessage(raw: msg) else { return false }
            for (_, sub) in subscriptions where sub.rule.matches(message) { sub.deliver(message) }
            return false
        case DBusMessageTypeCode.methodCall:
            guard let path = dbus_message_get_path(msg).map({ String(cString: $0) }),
                  let (transfersFDs, handler) = exportedHandler(for: path) else { return false }
            let token = nextToken
            nextToken += 1
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
        default:
            return false
        }
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


    // MARK: Sending

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
        if let destination { try DBusNames.check(destination, .busName) }
        try DBusNames.check(path, .objectPath)
        if let interface { try DBusNames.check(interface, .interface) }
        try DBusNames.check(member, .member)
        if !canPassUnixFDs, arguments.contains(where: \.containsUnixFD) { throw DBusError.unixFDNotSupported }
        guard raw != nil, connected else { throw DBusError.disconnected }

        let created = path.withCString { p in
            member.withCString { m in
                withOptionalCString(destination) { d in
                    withOptionalCString(interface) { i in dbus_message_new_method_call(d, p, i, m) }
                }
            }
        }
        guard let created else { throw DBusError.outOfMemory }
        let msg = UncheckedMessage(raw: created)
        defer { dbus_message_unref(created) }
        try MessageWriter.append(arguments, to: created)

        let token = nextToken
        nextToken += 1
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
        if let destination { try DBusNames.check(destination, .busName) }
        try DBusNames.check(path, .objectPath)
        if let interface { try DBusNames.check(interface, .interface) }
        try DBusNames.check(member, .member)
        if !canPassUnixFDs, arguments.contains(where: \.containsUnixFD) { throw DBusError.unixFDNotSupported }
        let created = path.withCString { p in
            member.withCString { m in
                withOptionalCString(destination) { d in
                    withOptionalCString(interface) { i in dbus_message_new_method_call(d, p, i, m) }
                }
            }
        }
        guard let msg = created else { throw DBusError.outOfMemory }
        defer { dbus_message_unref(msg) }
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

    // MARK: Exported objects

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

    // MARK: Signals

    /// Adds a match rule on the bus and streams matching signals. Dropping or cancelling the
    /// stream's consumer removes the rule again. The stream finishes when the connection closes.
    public func signals(matching rule: DBusMatchRule) async throws(DBusError) -> AsyncStream<DBusMessage> {
        try await subscribe(rule) { $0 }
    }

    /// Like `signals(matching:)`, with each signal transformed (nil drops it).
    public func subscribe<T: Sendable>(
        _ rule: DBusMatchRule, transform: @escaping @Sendable (DBusMessage) -> T?
    ) async throws(DBusError) -> AsyncStream<T> {
        try rule.validate()
        _ = try await call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "AddMatch", arguments: [.string(rule.ruleString)])
        let (stream, continuation) = AsyncStream<T>.makeStream(bufferingPolicy: .bufferingNewest(4096))
        let id = nextToken
        nextToken += 1
        subscriptions[id] = (rule, { if let v = transform($0) { continuation.yield(v) } }, { continuation.finish() })
        continuation.onTermination = { [weak self] _ in
            Task { await self?.unsubscribe(id) }
        }
        if !connected { continuation.finish() }
        return stream
    }

    private func unsubscribe(_ id: UInt64) async {
        guard let sub = subscriptions.removeValue(forKey: id), connected else { return }
        _ = try? await call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "RemoveMatch", arguments: [.string(sub.rule.ruleString)], timeout: .seconds(5))
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

private func withOptionalCString<R>(_ s: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
    guard let s else { return body(nil) }
    return s.withCString { body($0) }
}

/// The libdbus filter: forwards every message to the connection actor (we are on its queue).
private let messageFilter: DBusHandleMessageFunction = { _, msg, userData in
    guard let msg, let userData else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
    let connection = Unmanaged<DBusConnection>.fromOpaque(userData).takeUnretainedValue()
    let message = UncheckedMessage(raw: msg)
    let handled = connection.assumeIsolated { $0.handle(message.raw) }
    return handled ? DBUS_HANDLER_RESULT_HANDLED : DBUS_HANDLER_RESULT_NOT_YET_HANDLED
}

/// A libdbus message pointer handed between closures that all run on the connection's queue.
private struct UncheckedMessage: @unchecked Sendable {
    let raw: OpaquePointer
}

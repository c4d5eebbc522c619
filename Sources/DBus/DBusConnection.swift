import CDBus
@preconcurrency import Dispatch
import Glibc

/// A private connection to a message bus (never shared, never exits the process on disconnect).
///
/// All libdbus state lives in this actor; its executor is the dispatch queue that watches the
/// connection's socket, so incoming replies, signals and method calls are handled in order.
/// `close()` (or the bus going away) fails every outstanding call with `DBusError.disconnected`.
public actor DBusConnection {
    let executor: SerialQueueExecutor
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// The unique name the bus gave this connection (":1.42").
    public nonisolated let uniqueName: String
    /// Whether unix fds (type `h`) can be sent and received on this connection.
    public nonisolated let canPassUnixFDs: Bool

    var raw: OpaquePointer?
    var connected = true
    private var readSource: (any DispatchSourceRead)?
    private var dispatchScheduled = false
    private var filterInstalled = false

    struct PendingCall {
        var token: UInt64
        var continuation: CheckedContinuation<[DBusValue], any Error>
    }
    var pending: [UInt32: PendingCall] = [:]
    var subscriptions: [UInt64: (rule: DBusMatchRule, deliver: (DBusMessage) -> Void, finish: () -> Void)] = [:]
    /// The well-known names that subscriptions name as their sender, and the unique name that owns
    /// each now (absent while nobody does): a signal from such a name must come from its owner.
    var followedNames: Set<String> = []
    var nameOwners: [String: String] = [:]
    var exports: [String: (subtree: Bool, transfersFDs: Bool, handler: DBusMethodHandler)] = [:]
    var incoming: [UInt64: OpaquePointer] = [:]
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
            return .connectionFailed(DBusRemoteError(name: .failed, message: fallback))
        }
        return .connectionFailed(DBusRemoteError(
            name: err.name.map { DBusErrorName(String(cString: $0)) } ?? .failed,
            message: err.message.map { String(cString: $0) } ?? fallback))
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
    func teardown() {
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
    func scheduleDispatch() {
        guard !dispatchScheduled else { return }
        dispatchScheduled = true
        executor.queue.async { [weak self] in
            self?.assumeIsolated { $0.dispatchAll() }
        }
    }

    /// Called by libdbus (from `dbus_connection_dispatch`, on this actor's queue) for every message.
    fileprivate func handle(_ msg: OpaquePointer) -> Bool {
        switch dbus_message_get_type(msg) {
        case DBusMessageTypeCode.methodReturn, DBusMessageTypeCode.error: handleReply(msg)
        case DBusMessageTypeCode.signal: handleSignal(msg)
        case DBusMessageTypeCode.methodCall: handleMethodCall(msg)
        default: false
        }
    }

    /// A reply to one of our calls: resumes the caller.
    private func handleReply(_ msg: OpaquePointer) -> Bool {
        let replySerial = dbus_message_get_reply_serial(msg)
        guard let call = pending.removeValue(forKey: replySerial) else { return false }
        do {
            let message = try DBusMessage(raw: msg)
            if message.kind == .error {
                for case .unixFD(let fd) in message.arguments { Glibc.close(fd) }
                let text = message.arguments.first?.string ?? ""
                call.continuation.resume(throwing: DBusError.remote(
                    DBusRemoteError(name: message.errorName.map { DBusErrorName($0) } ?? .failed, message: text)))
            } else {
                call.continuation.resume(returning: message.arguments)
            }
        } catch {
            call.continuation.resume(throwing: error)
        }
        return true
    }

    /// A signal: to every subscription whose rule it matches (other filters may want it too).
    private func handleSignal(_ msg: OpaquePointer) -> Bool {
        guard !subscriptions.isEmpty || !followedNames.isEmpty, let message = try? DBusMessage(raw: msg) else { return false }
        noteOwnerChange(message)
        for (_, sub) in subscriptions where sub.rule.matches(message, owners: nameOwners) { sub.deliver(message) }
        return false
    }

    /// A number for a pending call, an incoming call or a subscription.
    func takeToken() -> UInt64 {
        defer { nextToken += 1 }
        return nextToken
    }
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
struct UncheckedMessage: @unchecked Sendable {
    let raw: OpaquePointer
}

import Synchronization

/// Which connections may call exported objects: only the one that currently owns a well-known
/// name (for blesend, bluetoothd's `org.bluez`). Any other caller on the bus is refused with
/// `org.freedesktop.DBus.Error.AccessDenied` before a method runs.
///
/// The owner is asked with `GetNameOwner` when watching starts and followed through
/// `NameOwnerChanged`. A call from a name that is not the known owner asks the bus once more
/// before it is refused, so that a restarted owner calling before its `NameOwnerChanged` has been
/// seen here (bluetoothd asks for the objects as soon as they are registered again) is not turned away.
public final class DBusCallerCheck: Sendable {
    /// The well-known name whose owner may call.
    public let name: String
    private let owner = Mutex<String?>(nil)
    private let watcher = Mutex<Task<Void, Never>?>(nil)

    public init(owner name: String) throws(DBusError) {
        try DBusNames.check(name, .busName)
        self.name = name
    }

    deinit {
        watcher.withLock { $0?.cancel() }
    }

    /// The unique name that may call now; nil while nobody owns `name`.
    public var currentOwner: String? { owner.withLock { $0 } }

    /// Asks the bus who owns `name` and follows changes from now on (until `stop` or deinit).
    public func start(on connection: DBusConnection) async throws(DBusError) {
        let changes = try await connection.signals(matching: DBusMatchRule(
            sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged", arg0: name))
        let task = Task { [weak self] in
            for await signal in changes {
                // NameOwnerChanged(name, old_owner, new_owner): an empty new owner means it left.
                guard signal.arguments.count == 3, let newOwner = signal.arguments[2].string else { continue }
                self?.owner.withLock { $0 = newOwner.isEmpty ? nil : newOwner }
            }
        }
        watcher.withLock { $0?.cancel(); $0 = task }
        try await refresh(on: connection)
    }

    /// Stops following the owner; calls are then judged against the last owner known.
    public func stop() {
        watcher.withLock { $0?.cancel(); $0 = nil }
    }

    /// Whether `sender` (a call's unique sender name) is the owner of `name`; asks the bus again
    /// before saying no.
    public func admits(_ sender: String?, on connection: DBusConnection) async -> Bool {
        guard let sender, !sender.isEmpty else { return false }
        if sender == currentOwner { return true }
        try? await refresh(on: connection)
        return sender == currentOwner
    }

    /// The error refused callers get.
    public func refusal(of sender: String?) -> DBusErrorReply {
        DBusErrorReply(name: "org.freedesktop.DBus.Error.AccessDenied",
                       message: "only \(name)'s owner may call these objects, not \(sender ?? "an unnamed sender")")
    }

    private func refresh(on connection: DBusConnection) async throws(DBusError) {
        do {
            let reply = try await connection.call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "GetNameOwner", arguments: [.string(name)], timeout: .seconds(5))
            owner.withLock { $0 = reply.first?.string }
        } catch .remote(let remote) where remote.name == .nameHasNoOwner {
            owner.withLock { $0 = nil }
        }
    }
}

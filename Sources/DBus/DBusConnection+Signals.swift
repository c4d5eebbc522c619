/// Signals from the bus, by match rule.
extension DBusConnection {

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
        let id = takeToken()
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

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
        if let name = rule.followedName { try await follow(name) }
        try await addMatch(rule)
        let (stream, continuation) = AsyncStream<T>.makeStream(bufferingPolicy: .bufferingNewest(4096))
        let id = takeToken()
        subscriptions[id] = (rule, { if let v = transform($0) { continuation.yield(v) } }, { continuation.finish() })
        continuation.onTermination = { [weak self] _ in
            Task { await self?.unsubscribe(id) }
        }
        if !connected { continuation.finish() }
        return stream
    }

    /// Follows who owns `name` (once per name, for the connection's life): the bus's
    /// `NameOwnerChanged` for it from now on (`noteOwnerChange`, as each arrives), then its owner now.
    private func follow(_ name: String) async throws(DBusError) {
        guard followedNames.insert(name).inserted else { return }
        do {
            try await addMatch(.ownerChanges(of: name))
            let reply = try await call(
                destination: DBusMatchRule.busDriver, path: "/org/freedesktop/DBus", interface: DBusMatchRule.busDriver,
                member: "GetNameOwner", arguments: [.string(name)], timeout: .seconds(5))
            if let owner = reply.first?.string { nameOwners[name] = owner }
        } catch .remote(let remote) where remote.name == .nameHasNoOwner {
            nameOwners[name] = nil
        } catch {
            followedNames.remove(name)
            throw error
        }
    }

    /// Keeps `nameOwners` current: called for every signal before it is delivered, so a signal is
    /// judged by the owner as of its place in the stream.
    func noteOwnerChange(_ m: DBusMessage) {
        guard m.sender == DBusMatchRule.busDriver, m.interface == DBusMatchRule.busDriver, m.member == "NameOwnerChanged",
              m.arguments.count == 3, let name = m.arguments[0].string, followedNames.contains(name),
              let newOwner = m.arguments[2].string else { return }
        nameOwners[name] = newOwner.isEmpty ? nil : newOwner
    }

    private func addMatch(_ rule: DBusMatchRule) async throws(DBusError) {
        _ = try await call(
            destination: DBusMatchRule.busDriver, path: "/org/freedesktop/DBus", interface: DBusMatchRule.busDriver,
            member: "AddMatch", arguments: [.string(rule.ruleString)])
    }

    private func unsubscribe(_ id: UInt64) async {
        guard let sub = subscriptions.removeValue(forKey: id), connected else { return }
        _ = try? await call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "RemoveMatch", arguments: [.string(sub.rule.ruleString)], timeout: .seconds(5))
    }
}

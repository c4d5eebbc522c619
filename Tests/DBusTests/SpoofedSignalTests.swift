import Testing
@testable import DBus

/// Any client on a bus may send any signal, to everyone or to one connection alone, and the bus
/// delivers a unicast signal whatever the receiver's match rules say. A rule that names a
/// well-known sender (bluetoothd's `org.bluez`) or the bus driver must still see only signals
/// from that name's owner, or from the bus itself.
@Suite("Signals from impostors")
struct SpoofedSignalTests {
    static let name = "org.blesend.Owner"

    static func requestName(_ c: DBusConnection) async throws {
        let reply = try await c.call(
            destination: DBusMatchRule.busDriver, path: "/org/freedesktop/DBus", interface: DBusMatchRule.busDriver,
            member: "RequestName", arguments: [.string(name), .uint32(0)])
        #expect(reply.first == .uint32(1))  // primary owner
    }

    static func releaseName(_ c: DBusConnection) async throws {
        _ = try await c.call(
            destination: DBusMatchRule.busDriver, path: "/org/freedesktop/DBus", interface: DBusMatchRule.busDriver,
            member: "ReleaseName", arguments: [.string(name)])
    }

    /// Waits until the bus has routed everything `c` sent before (its messages are handled in order).
    static func flushed(_ c: DBusConnection) async throws {
        _ = try await c.call(
            destination: DBusMatchRule.busDriver, path: "/org/freedesktop/DBus", interface: DBusMatchRule.busDriver, member: "GetId")
    }

    /// What the impostor sends: the owner's `Connected` changes and the bus's `NameOwnerChanged`,
    /// each broadcast and unicast to `victim`.
    static func impersonate(from c: DBusConnection, to victim: DBusConnection, owner: String) async throws {
        for destination in [nil, victim.uniqueName] {
            try await c.emitSignal(
                path: "/dev", interface: dbusPropertiesInterface, member: "PropertiesChanged",
                arguments: [.string("org.bluez.Device1"), .properties(["Connected": .bool(false)]), .strings([])],
                destination: destination)
            try await c.emitSignal(
                path: "/org/freedesktop/DBus", interface: DBusMatchRule.busDriver, member: "NameOwnerChanged",
                arguments: [.string(name), .string(owner), .string("")], destination: destination)
            try await c.emitSignal(
                path: "/org/freedesktop/DBus", interface: DBusMatchRule.busDriver, member: "NameOwnerChanged",
                arguments: [.string(name), .string(owner), .string(c.uniqueName)], destination: destination)
        }
        try await flushed(c)
    }

    @Test func aRuleNamingAWellKnownSenderSeesOnlyItsOwner() async throws {
        try await withBus { bus, a, b in
            let impostor = try await DBusConnection.connect(.address(bus.address))
            try await Self.requestName(b)
            let changes = try await a.propertiesChanged(sender: Self.name, path: "/dev", interface: "org.bluez.Device1")
            let owners = try await a.signals(matching: DBusMatchRule(
                sender: DBusMatchRule.busDriver, interface: DBusMatchRule.busDriver, member: "NameOwnerChanged", arg0: Self.name))

            try await Self.impersonate(from: impostor, to: a, owner: b.uniqueName)
            try await b.emitPropertiesChanged(path: "/dev", interface: "org.bluez.Device1", changed: ["Connected": .bool(true)])
            var it = changes.makeAsyncIterator()
            let first = try #require(await it.next())
            #expect(first.changed["Connected"]?.bool == true)  // the owner's, not the impostor's false

            // The owner leaves for real: the bus's own NameOwnerChanged is the first one seen.
            try await Self.releaseName(b)
            var oit = owners.makeAsyncIterator()
            let left = try #require(await oit.next())
            #expect(left.sender == DBusMatchRule.busDriver)
            #expect(left.arguments.map(\.string) == [Self.name, b.uniqueName, ""])

            // A new owner: its signals match, the old owner's no longer do.
            try await Self.requestName(impostor)
            #expect(await oit.next()?.arguments.map(\.string) == [Self.name, "", impostor.uniqueName])
            try await b.emitPropertiesChanged(path: "/dev", interface: "org.bluez.Device1", changed: ["Connected": .bool(true)])
            try await Self.flushed(b)
            try await impostor.emitPropertiesChanged(path: "/dev", interface: "org.bluez.Device1", changed: ["Connected": .bool(false)])
            #expect(await it.next()?.changed["Connected"]?.bool == false)
            await impostor.close()
        }
    }

    @Test func aSpoofedOwnerChangeDoesNotLetTheImpostorCall() async throws {
        try await withBus { bus, a, b in
            let impostor = try await DBusConnection.connect(.address(bus.address))
            try await Self.requestName(b)
            let callers = try DBusCallerCheck(owner: Self.name)
            try await callers.start(on: a)
            #expect(callers.currentOwner == b.uniqueName)

            try await Self.impersonate(from: impostor, to: a, owner: b.uniqueName)
            try await Self.flushed(a)   // a has read what the bus routed to it before this reply
            try await Task.sleep(for: .milliseconds(200))   // and its watcher has had its turn
            #expect(callers.currentOwner == b.uniqueName)
            #expect(await callers.admits(impostor.uniqueName, on: a) == false)
            #expect(await callers.admits(b.uniqueName, on: a))
            callers.stop()
            await impostor.close()
        }
    }
}

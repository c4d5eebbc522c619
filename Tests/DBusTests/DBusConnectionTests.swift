import Glibc
import TestSupport
import Testing
@testable import DBus

/// Runs `body` with a fresh private bus and two connections to it; everything is torn down after.
func withBus(_ body: (TestBus, DBusConnection, DBusConnection) async throws -> Void) async throws {
    let bus = try TestBus()
    defer { bus.stop() }
    let a = try await DBusConnection.connect(.address(bus.address))
    let b = try await DBusConnection.connect(.address(bus.address))
    do {
        try await body(bus, a, b)
    } catch {
        await a.close()
        await b.close()
        throw error
    }
    await a.close()
    await b.close()
}

let testIface = "org.blesend.Test"

@Suite("DBus connection against a private dbus-daemon")
struct DBusConnectionTests {
    @Test func listNamesAndGetId() async throws {
        try await withBus { _, a, b in
            let names = try await a.call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "ListNames")
            let list = try #require(names.first?.strings)
            #expect(list.contains("org.freedesktop.DBus"))
            #expect(list.contains(a.uniqueName))
            #expect(list.contains(b.uniqueName))
            let id = try await a.call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "GetId")
            #expect(id.first?.string?.count == 32)
            #expect(a.canPassUnixFDs)
        }
    }

    @Test func roundTripOfEveryValueType() async throws {
        try await withBus { _, a, b in
            try await b.export(path: "/echo") { call in call.arguments }
            let big = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
            let values: [DBusValue] = [
                .byte(0xFE), .bool(true), .bool(false), .int16(-12345), .uint16(54321), .int32(-7), .uint32(0xDEADBEEF),
                .int64(Int64.min), .uint64(UInt64.max), .double(3.25), .string("héllo ✓"), .string(""),
                .objectPath("/org/bluez/hci0/dev_00_AA_01_00_00_00"), .signature("a{sv}"),
                .bytes([]), .bytes([1, 2, 3]), .bytes(big),
                .array(elementSignature: "s", []),
                .strings(["a", "b"]),
                .objectPaths(["/a", "/b/c"]),
                .array(elementSignature: "(ib)", [.structure([.int32(1), .bool(true)]), .structure([.int32(2), .bool(false)])]),
                .properties(["UUID": .string("6f3c0002"), "Flags": .strings(["notify"]), "Value": .bytes([9]), "MTU": .uint16(517)]),
                .dictionary(keySignature: "o", valueSignature: "a{sa{sv}}", [
                    DBusDictEntry(key: .objectPath("/x"), value: .dictionary(keySignature: "s", valueSignature: "a{sv}", [
                        DBusDictEntry(key: .string("org.Foo"), value: .properties(["A": .int32(1)])),
                    ])),
                ]),
                .dictionary(keySignature: "q", valueSignature: "ay", [DBusDictEntry(key: .uint16(0x004C), value: .bytes([2, 0x15]))]),
                .structure([.string("x"), .variant(.variant(.uint32(5))), .array(elementSignature: "v", [.variant(.bytes([1]))])]),
                .variant(.properties(["nested": .variant(.array(elementSignature: "ai", [.array(elementSignature: "i", [.int32(3)])]))])),
            ]
            let reply = try await a.call(destination: b.uniqueName, path: "/echo", interface: testIface, member: "Echo", arguments: values)
            #expect(reply.count == values.count)
            for (sent, got) in zip(values, reply) {
                #expect(sent == got, "\(sent.signature)")
            }
            // The conversion helpers.
            let props = try #require(reply[21].properties)
            #expect(props["MTU"]?.uint16 == 517)
            #expect(props["Value"]?.bytes == [9])
            #expect(props["Flags"]?.strings == ["notify"])
            #expect(reply[16].bytes == big)
        }
    }

    @Test func errorRepliesAndUnknownTargets() async throws {
        try await withBus { _, a, b in
            try await b.export(path: "/err") { _ in throw DBusErrorReply(name: "org.bluez.Error.NotPermitted", message: "nope") }
            await #expect(throws: DBusError.remote(DBusRemoteError(name: "org.bluez.Error.NotPermitted", message: "nope"))) {
                _ = try await a.call(destination: b.uniqueName, path: "/err", interface: testIface, member: "X")
            }
            do {
                _ = try await a.call(destination: "org.bluez", path: "/", interface: nil, member: "X")
                Issue.record("expected ServiceUnknown")
            } catch let DBusError.remote(e) {
                #expect(e.name == "org.freedesktop.DBus.Error.ServiceUnknown")
            }
            do {
                _ = try await a.call(destination: b.uniqueName, path: "/not/exported", interface: testIface, member: "X")
                Issue.record("expected UnknownMethod/UnknownObject")
            } catch let DBusError.remote(e) {
                #expect(e.name.isIn("org.freedesktop.DBus.Error.Unknown"))
            }
        }
    }

    @Test func unixFDRoundTrip() async throws {
        try await withBus { _, a, b in
            // B hands out the write end of a pipe (like AcquireWrite) and keeps the read end.
            var fds: [Int32] = [-1, -1]
            #expect(pipe(&fds) == 0)
            let readEnd = fds[0], writeEnd = fds[1]
            try await b.export(path: "/fd") { call in
                if call.member == "Acquire" { return [.unixFD(writeEnd), .uint16(185)] }
                // "Give": read from the fd the caller sent us.
                guard let fd = try call.argument(0).unixFD else { throw DBusErrorReply.invalidArgs("h") }
                defer { close(fd) }
                var buf = [UInt8](repeating: 0, count: 64)
                let n = read(fd, &buf, 64)
                return [.bytes(Array(buf[0..<max(0, n)]))]
            }
            let reply = try await a.call(destination: b.uniqueName, path: "/fd", interface: testIface, member: "Acquire")
            close(writeEnd)  // libdbus duplicated it into the message
            let fd = try #require(reply.first?.unixFD)
            #expect(reply.last?.uint16 == 185)
            let msg: [UInt8] = Array("through the fd".utf8)
            #expect(write(fd, msg, msg.count) == msg.count)
            close(fd)
            var buf = [UInt8](repeating: 0, count: 64)
            let n = read(readEnd, &buf, 64)
            #expect(Array(buf[0..<max(0, n)]) == msg)
            close(readEnd)

            // And the other direction: send an fd as an argument.
            var p2: [Int32] = [-1, -1]
            #expect(pipe(&p2) == 0)
            let payload: [UInt8] = [1, 2, 3, 4]
            #expect(write(p2[1], payload, 4) == 4)
            close(p2[1])
            let got = try await a.call(destination: b.uniqueName, path: "/fd", interface: testIface, member: "Give", arguments: [.unixFD(p2[0])])
            close(p2[0])
            #expect(got.first?.bytes == payload)
        }
    }

    @Test func propertiesChangedAndObjectManagerSignals() async throws {
        try await withBus { _, a, b in
            let changes = try await a.propertiesChanged(sender: b.uniqueName, pathNamespace: "/app", interface: "org.bluez.GattCharacteristic1")
            let om = try await a.objectManagerEvents(sender: b.uniqueName)
            // Not matching (other interface / path): must be filtered out.
            try await b.emitPropertiesChanged(path: "/app/c0", interface: "org.other.Iface", changed: ["X": .int32(1)])
            try await b.emitPropertiesChanged(path: "/elsewhere", interface: "org.bluez.GattCharacteristic1", changed: ["X": .int32(1)])
            try await b.emitPropertiesChanged(
                path: "/app/c0", interface: "org.bluez.GattCharacteristic1", changed: ["Value": .bytes([7, 8])], invalidated: ["Foo"])
            try await b.emitSignal(
                path: "/", interface: dbusObjectManagerInterface, member: "InterfacesAdded",
                arguments: [.objectPath("/dev1"), .stringDictionary(valueSignature: "a{sv}", ["org.bluez.Device1": .properties(["RSSI": .int16(-40)])])])
            try await b.emitSignal(
                path: "/", interface: dbusObjectManagerInterface, member: "InterfacesRemoved",
                arguments: [.objectPath("/dev1"), .strings(["org.bluez.Device1"])])

            var it = changes.makeAsyncIterator()
            let first = try #require(await it.next())
            #expect(first.path == "/app/c0")
            #expect(first.interface == "org.bluez.GattCharacteristic1")
            #expect(first.changed["Value"]?.bytes == [7, 8])
            #expect(first.invalidated == ["Foo"])

            var oit = om.makeAsyncIterator()
            #expect(await oit.next() == .added(path: "/dev1", interfaces: ["org.bluez.Device1": ["RSSI": .int16(-40)]]))
            #expect(await oit.next() == .removed(path: "/dev1", interfaces: ["org.bluez.Device1"]))
        }
    }

    @Test func invalidNamesThrowInsteadOfAborting() async throws {
        try await withBus { _, a, _ in
            await #expect(throws: DBusError.invalidName(kind: .objectPath, value: "no/leading/slash")) {
                _ = try await a.call(destination: "org.x", path: "no/leading/slash", interface: nil, member: "M")
            }
            await #expect(throws: DBusError.invalidName(kind: .busName, value: "not a name")) {
                _ = try await a.call(destination: "not a name", path: "/", interface: nil, member: "M")
            }
            await #expect(throws: DBusError.invalidName(kind: .interface, value: "nodots")) {
                _ = try await a.call(destination: "org.x", path: "/", interface: "nodots", member: "M")
            }
            await #expect(throws: DBusError.invalidName(kind: .member, value: "1bad")) {
                _ = try await a.call(destination: "org.x", path: "/", interface: nil, member: "1bad")
            }
            await #expect(throws: DBusError.invalidName(kind: .objectPath, value: "/trailing/")) {
                _ = try await a.call(destination: "org.x", path: "/", interface: nil, member: "M", arguments: [.objectPath("/trailing/")])
            }
            await #expect(throws: DBusError.invalidName(kind: .signature, value: "a{vs}")) {
                _ = try await a.call(destination: "org.x", path: "/", interface: nil, member: "M", arguments: [.signature("a{vs}")])
            }
            await #expect(throws: DBusError.self) {
                _ = try await a.call(destination: "org.x", path: "/", interface: nil, member: "M", arguments: [.array(elementSignature: "s", [.int32(1)])])
            }
            await #expect(throws: DBusError.self) {
                _ = try await a.call(destination: "org.x", path: "/", interface: nil, member: "M", arguments: [.structure([])])
            }
            await #expect(throws: DBusError.invalidName(kind: .objectPath, value: "//")) {
                try await a.export(path: "//") { _ in [] }
            }
            await #expect(throws: DBusError.self) {
                try await a.emitSignal(path: "/", interface: "bad..iface", member: "S")
            }
            // Too deep.
            var deep = DBusValue.int32(0)
            for _ in 0..<70 { deep = .variant(deep) }
            let tooDeep = deep
            await #expect(throws: DBusError.self) {
                _ = try await a.call(destination: "org.x", path: "/", interface: nil, member: "M", arguments: [tooDeep])
            }
            // Still alive and usable.
            let id = try await a.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "GetId")
            #expect(id.count == 1)
        }
    }

    @Test func methodCallTimeout() async throws {
        try await withBus { _, a, b in
            try await b.export(path: "/slow") { _ in
                try await Task.sleep(for: .seconds(3))
                return []
            }
            let start = ContinuousClock.now
            await #expect(throws: DBusError.timeout) {
                _ = try await a.call(destination: b.uniqueName, path: "/slow", interface: testIface, member: "Slow", timeout: .milliseconds(200))
            }
            #expect(ContinuousClock.now - start < .seconds(2))
            // The connection still works afterwards.
            _ = try await a.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "GetId")
        }
    }

    @Test func busGoingAwayFailsCallsWithoutExiting() async throws {
        let bus = try TestBus()
        defer { bus.stop() }
        let a = try await DBusConnection.connect(.address(bus.address))
        let b = try await DBusConnection.connect(.address(bus.address))
        try await b.export(path: "/hang") { _ in
            try await Task.sleep(for: .seconds(30))
            return []
        }
        let signals = try await a.propertiesChanged()
        let outstanding = Task {
            try await a.call(destination: b.uniqueName, path: "/hang", interface: testIface, member: "Hang", timeout: .seconds(20))
        }
        try await Task.sleep(for: .milliseconds(200))
        bus.killDaemon()
        let result = await outstanding.result
        #expect(throws: DBusError.disconnected) { _ = try result.get() }
        await #expect(throws: DBusError.disconnected) {
            _ = try await a.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "GetId")
        }
        var it = signals.makeAsyncIterator()
        #expect(await it.next() == nil)  // stream finished
        #expect(await a.isConnected == false)
        await a.close()
        await b.close()
    }

    @Test func closeFailsOutstandingCalls() async throws {
        try await withBus { _, a, b in
            try await b.export(path: "/hang") { _ in
                try await Task.sleep(for: .seconds(30))
                return []
            }
            let outstanding = Task {
                try await a.call(destination: b.uniqueName, path: "/hang", interface: testIface, member: "Hang")
            }
            try await Task.sleep(for: .milliseconds(200))
            await a.close()
            let result = await outstanding.result
            #expect(throws: DBusError.disconnected) { _ = try result.get() }
        }
    }

    @Test func objectTreeServesStandardInterfaces() async throws {
        try await withBus { _, a, b in
            let tree = try DBusObjectTree(root: "/app")
            try tree.setObject(path: "/app/s0", interfaces: ["org.bluez.GattService1": ["UUID": .string("u"), "Primary": .bool(true)]])
            try tree.setObject(path: "/app/s0/c0", interfaces: [
                "org.bluez.GattCharacteristic1": ["UUID": .string("c"), "Service": .objectPath("/app/s0"), "Flags": .strings(["notify"])],
            ])
            try tree.setMethod(path: "/app/s0/c0", interface: "org.bluez.GattCharacteristic1", member: "ReadValue") { _ in [.bytes([1])] }
            try await tree.export(on: b)

            let objects = try await a.managedObjects(destination: b.uniqueName, path: "/app")
            #expect(objects.count == 2)
            #expect(objects["/app/s0"]?["org.bluez.GattService1"]?["Primary"] == .bool(true))
            #expect(objects["/app/s0/c0"]?["org.bluez.GattCharacteristic1"]?["Flags"]?.strings == ["notify"])
            let uuid = try await a.property(destination: b.uniqueName, path: "/app/s0", interface: "org.bluez.GattService1", name: "UUID")
            #expect(uuid == .string("u"))
            let all = try await a.allProperties(destination: b.uniqueName, path: "/app/s0/c0", interface: "org.bluez.GattCharacteristic1")
            #expect(all["Service"] == .objectPath("/app/s0"))
            let read = try await a.call(destination: b.uniqueName, path: "/app/s0/c0", interface: "org.bluez.GattCharacteristic1", member: "ReadValue", arguments: [.properties([:])])
            #expect(read.first?.bytes == [1])
            tree.setProperty(path: "/app/s0/c0", interface: "org.bluez.GattCharacteristic1", name: "Notifying", value: .bool(true))
            #expect(tree.property(path: "/app/s0/c0", interface: "org.bluez.GattCharacteristic1", name: "Notifying") == .bool(true))
            let intro = try await a.call(destination: b.uniqueName, path: "/app", interface: dbusIntrospectableInterface, member: "Introspect")
            #expect(intro.first?.string?.contains("<node name=\"s0\"/>") == true)
        }
    }

    @Test func manyConcurrentCalls() async throws {
        try await withBus { _, a, b in
            try await b.export(path: "/echo") { call in call.arguments }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for i in 0..<100 {
                    group.addTask {
                        let r = try await a.call(destination: b.uniqueName, path: "/echo", interface: testIface, member: "Echo", arguments: [.int32(Int32(i))])
                        #expect(r == [.int32(Int32(i))])
                    }
                }
                try await group.waitForAll()
            }
        }
    }
}

@Suite("DBusValue model")
struct DBusValueTests {
    @Test func signatures() {
        #expect(DBusValue.properties([:]).signature == "a{sv}")
        #expect(DBusValue.bytes([1]).signature == "ay")
        #expect(DBusValue.structure([.unixFD(3), .uint16(1)]).signature == "(hq)")
        #expect(DBusValue.objectPaths([]).signature == "ao")
        #expect(DBusValue.variant(.int32(1)).signature == "v")
    }

    @Test func helpersLookThroughVariants() {
        let v = DBusValue.variant(.variant(.array(elementSignature: "y", [.byte(1), .byte(2)])))
        #expect(v.bytes == [1, 2])
        #expect(v.string == nil)
        #expect(DBusValue.properties(["a": .int16(-3)]).properties == ["a": .int16(-3)])
    }

    @Test func nameValidation() {
        #expect(DBusNames.isValidPath("/org/bluez/hci0"))
        #expect(!DBusNames.isValidPath("/org/"))
        #expect(!DBusNames.isValidPath("/a\u{0}b"))
        #expect(DBusNames.isValidBusName("org.bluez"))
        #expect(DBusNames.isValidBusName(":1.42"))
        #expect(!DBusNames.isValidInterface("org"))
        #expect(DBusNames.isValidSignature("a{sa{sv}}"))
        #expect(!DBusNames.isValidSignature("a{"))
    }
}

import DBus
import Glibc
import Synchronization
import TestSupport
import Testing
@testable import BlueZ

/// The receiver's application and advertisement served on a private bus, as bluetoothd sees them:
/// `GetManagedObjects` on the application's root, properties, and the calls on the characteristics.
@Suite("GATT application on the bus", .timeLimit(.minutes(1)))
struct GattApplicationExportTests {
    /// Records the calls routed to it; acquired sockets are fresh socket pairs.
    final class RecordingHandler: GattCharacteristicHandler {
        let calls = Mutex<[String]>([])
        let options = Mutex<[GattRequestOptions]>([])
        let written = Mutex<[[UInt8]]>([])
        let ourEnds = Mutex<[Int32]>([])

        func acquireWrite(_ options: GattRequestOptions) async throws -> AcquiredSocket { try socket("AcquireWrite", options) }
        func acquireNotify(_ options: GattRequestOptions) async throws -> AcquiredSocket { try socket("AcquireNotify", options) }
        func writeValue(_ value: [UInt8], options: GattRequestOptions) async throws {
            record("WriteValue", options)
            written.withLock { $0.append(value) }
        }
        func startNotify() async throws { record("StartNotify", nil) }
        func stopNotify() async { record("StopNotify", nil) }
        func readValue() async throws -> [UInt8] {
            record("ReadValue", nil)
            return [7]
        }

        private func record(_ call: String, _ options: GattRequestOptions?) {
            calls.withLock { $0.append(call) }
            if let options { self.options.withLock { $0.append(options) } }
        }

        private func socket(_ call: String, _ options: GattRequestOptions) throws -> AcquiredSocket {
            record(call, options)
            var pair: [Int32] = [-1, -1]
            guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &pair) == 0 else { throw DBusErrorReply.failed("socketpair") }
            ourEnds.withLock { $0.append(pair[0]) }
            return AcquiredSocket(fd: pair[1], mtu: UInt16(options.mtu ?? 23))
        }

        deinit { for fd in ourEnds.withLock({ $0 }) { close(fd) } }
    }

    let root = "/org/blesend/app"
    let charIface = "org.bluez.GattCharacteristic1"
    var transferPath: String { root + "/service0/char0" }
    var versionPath: String { root + "/service0/char1" }

    /// A private bus, the application (and advertisement) exported on `server`, `bluetoothd` (the
    /// owner of org.bluez) calling. `stranger` is another connection on the same bus.
    func withExport(
        _ body: (GattApplicationExport, LEAdvertisementExport, RecordingHandler, DBusConnection, DBusConnection) async throws -> Void
    ) async throws {
        try await withExport { application, advertisement, handler, server, bluetoothd, _, _ in
            try await body(application, advertisement, handler, server, bluetoothd)
        }
    }

    func withExport(
        _ body: (GattApplicationExport, LEAdvertisementExport, RecordingHandler, DBusConnection, DBusConnection, DBusConnection,
                 DBusCallerCheck) async throws -> Void
    ) async throws {
        let bus = try TestBus()
        defer { bus.stop() }
        let server = try await DBusConnection.connect(.address(bus.address))
        let bluetoothd = try await DBusConnection.connect(.address(bus.address))
        let stranger = try await DBusConnection.connect(.address(bus.address))
        let handler = RecordingHandler()
        do {
            try await Self.claim("org.bluez", on: bluetoothd)
            let callers = try DBusCallerCheck(owner: "org.bluez")
            try await callers.start(on: server)
            let application = try GattApplicationExport(BlesendGATT.application(versionCharacteristic: true), root: root, bus: server)
            let advertisement = try LEAdvertisementExport(BlesendGATT.advertisement(localName: nil), path: "/org/blesend/advertisement0", bus: server)
            try application.route(characteristic: BlesendGATT.transferCharacteristicUUID, to: handler)
            try await application.export(callers: callers)
            try await advertisement.export(callers: callers)
            try await body(application, advertisement, handler, server, bluetoothd, stranger, callers)
            callers.stop()
        } catch {
            for connection in [server, bluetoothd, stranger] { await connection.close() }
            throw error
        }
        for connection in [server, bluetoothd, stranger] { await connection.close() }
    }

    static func claim(_ name: String, on connection: DBusConnection) async throws {
        let reply = try await connection.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "RequestName", arguments: [.string(name), .uint32(0)])
        #expect(reply.first == .uint32(1))  // primary owner
    }

    static func release(_ name: String, on connection: DBusConnection) async throws {
        _ = try await connection.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "ReleaseName", arguments: [.string(name)])
    }

    /// The D-Bus error name a call failed with, nil if it succeeded.
    static func errorName(_ call: () async throws(DBusError) -> [DBusValue]) async -> String? {
        do {
            let reply = try await call()
            closeUnixFDs(reply)
            return nil
        } catch .remote(let remote) {
            return remote.name.rawValue
        } catch {
            return "\(error)"
        }
    }

    /// Any connection on the system bus could call our objects: take bluetoothd's acquired sockets,
    /// write values, read the application. Only org.bluez's owner may.
    @Test func callsFromAnyoneButOrgBluezsOwnerAreDenied() async throws {
        try await withExport { _, advertisement, handler, server, bluetoothd, stranger, _ in
            let denied = "org.freedesktop.DBus.Error.AccessDenied"
            let options: DBusValue = .properties(["device": .objectPath("/org/bluez/hci0/dev_00_AA_01_01_00_01"), "mtu": .uint16(185)])
            let calls: [(path: String, interface: String, member: String, arguments: [DBusValue])] = [
                (transferPath, charIface, "AcquireWrite", [options]),
                (transferPath, charIface, "AcquireNotify", [options]),
                (transferPath, charIface, "WriteValue", [.bytes([1, 2, 3]), options]),
                (transferPath, charIface, "StartNotify", []),
                (transferPath, charIface, "StopNotify", []),
                (transferPath, charIface, "ReadValue", [.properties([:])]),
                (versionPath, charIface, "ReadValue", [.properties([:])]),
                (root, dbusObjectManagerInterface, "GetManagedObjects", []),
                (transferPath, dbusPropertiesInterface, "GetAll", [.string(charIface)]),
                (transferPath, dbusIntrospectableInterface, "Introspect", []),
                (advertisement.path, "org.bluez.LEAdvertisement1", "Release", []),
                (advertisement.path, dbusPropertiesInterface, "GetAll", [.string("org.bluez.LEAdvertisement1")]),
            ]
            for call in calls {
                let name = await Self.errorName { () async throws(DBusError) in
                    try await stranger.call(destination: server.uniqueName, path: call.path, interface: call.interface,
                                            member: call.member, arguments: call.arguments)
                }
                #expect(name == denied, "\(call.member) at \(call.path) from a stranger: \(name ?? "answered")")
            }
            #expect(handler.calls.withLock { $0 }.isEmpty)
            // bluetoothd's own calls still work.
            for call in calls {
                let name = await Self.errorName { () async throws(DBusError) in
                    try await bluetoothd.call(destination: server.uniqueName, path: call.path, interface: call.interface,
                                              member: call.member, arguments: call.arguments)
                }
                #expect(name == nil, "\(call.member) at \(call.path) from bluetoothd: \(name ?? "")")
            }
            #expect(handler.calls.withLock { $0 }.count == 6)
        }
    }

    /// bluetoothd restarts under a new unique name: the new owner may call, the old connection
    /// (or whoever held the name before) may not, and nobody may while the name has no owner.
    @Test func theCallerFollowsOrgBluezsOwner() async throws {
        try await withExport { _, _, _, server, bluetoothd, stranger, callers in
            func managedObjects(from connection: DBusConnection) async -> String? {
                await Self.errorName { () async throws(DBusError) in
                    try await connection.call(destination: server.uniqueName, path: root, interface: dbusObjectManagerInterface,
                                              member: "GetManagedObjects")
                }
            }
            let denied = "org.freedesktop.DBus.Error.AccessDenied"
            #expect(callers.currentOwner == bluetoothd.uniqueName)
            try await Self.release("org.bluez", on: bluetoothd)
            // NameOwnerChanged arrives on its own time.
            for _ in 0..<100 where callers.currentOwner != nil { try await Task.sleep(for: .milliseconds(20)) }
            #expect(callers.currentOwner == nil)
            #expect(await managedObjects(from: bluetoothd) == denied)
            // The next owner calls at once, before its NameOwnerChanged may have been seen.
            try await Self.claim("org.bluez", on: stranger)
            #expect(await managedObjects(from: stranger) == nil)
            #expect(await managedObjects(from: bluetoothd) == denied)
            #expect(callers.currentOwner == stranger.uniqueName)
        }
    }

    @Test func getManagedObjectsAnswersWhatTheModelDeclares() async throws {
        try await withExport { application, _, _, server, bluetoothd in
            let objects = try await bluetoothd.managedObjects(destination: server.uniqueName, path: root)
            var expected: DBusManagedObjects = [:]
            for object in application.objects.objects { expected[object.path] = [object.interface: object.properties] }
            #expect(objects == expected)
            #expect(objects.count == 3)
            #expect(objects[transferPath]?[charIface]?["Flags"]?.strings == ["write-without-response", "notify"])
            // Below the root only: the advertisement is an object of its own.
            let uuid = try await bluetoothd.property(destination: server.uniqueName, path: versionPath, interface: charIface, name: "UUID")
            #expect(uuid == .string(BlesendGATT.versionCharacteristicUUID))
        }
    }

    @Test func theVersionCharacteristicReadsTheProtocolVersion() async throws {
        try await withExport { _, _, handler, server, bluetoothd in
            let reply = try await bluetoothd.call(
                destination: server.uniqueName, path: versionPath, interface: charIface, member: "ReadValue", arguments: [.properties([:])])
            #expect(reply == [.bytes([BlesendGATT.protocolVersion])])
            #expect(handler.calls.withLock { $0 }.isEmpty)
        }
    }

    @Test func callsOnTheTransferCharacteristicReachTheHandlerDecoded() async throws {
        try await withExport { _, _, handler, server, bluetoothd in
            let device = "/org/bluez/hci0/dev_00_AA_01_01_00_01"
            let options: DBusValue = .properties(["device": .objectPath(device), "mtu": .uint16(185), "link": .string("LE")])
            let acquired = try await bluetoothd.call(
                destination: server.uniqueName, path: transferPath, interface: charIface, member: "AcquireWrite", arguments: [options])
            #expect(acquired.count == 2)
            let fd = try #require(acquired.first?.unixFD)
            #expect(fd >= 0)
            close(fd)
            #expect(acquired.last == .uint16(185))

            _ = try await bluetoothd.call(
                destination: server.uniqueName, path: transferPath, interface: charIface, member: "AcquireNotify", arguments: [.properties([:])])
                .first?.unixFD.map { close($0) }
            _ = try await bluetoothd.call(
                destination: server.uniqueName, path: transferPath, interface: charIface, member: "WriteValue",
                arguments: [.bytes([1, 2, 3]), options])
            _ = try await bluetoothd.call(destination: server.uniqueName, path: transferPath, interface: charIface, member: "StartNotify")
            _ = try await bluetoothd.call(destination: server.uniqueName, path: transferPath, interface: charIface, member: "StopNotify")
            let read = try await bluetoothd.call(
                destination: server.uniqueName, path: transferPath, interface: charIface, member: "ReadValue", arguments: [.properties([:])])
            #expect(read == [.bytes([7])])

            #expect(handler.calls.withLock { $0 } == ["AcquireWrite", "AcquireNotify", "WriteValue", "StartNotify", "StopNotify", "ReadValue"])
            #expect(handler.options.withLock { $0 } == [
                GattRequestOptions(device: device, mtu: 185), GattRequestOptions(), GattRequestOptions(device: device, mtu: 185),
            ])
            #expect(handler.written.withLock { $0 } == [[1, 2, 3]])

            // A WriteValue without its value is refused before the handler hears of it.
            await #expect(throws: DBusError.self) {
                _ = try await bluetoothd.call(destination: server.uniqueName, path: transferPath, interface: charIface, member: "WriteValue")
            }
            #expect(handler.written.withLock { $0 }.count == 1)
        }
    }

    @Test func theNotifierSendsValueChangesAndKeepsNotifying() async throws {
        try await withExport { application, _, _, server, bluetoothd in
            let changes = try await bluetoothd.propertiesChanged(sender: server.uniqueName, path: transferPath, interface: charIface)
            let notifier = application.notifier(characteristic: BlesendGATT.transferCharacteristicUUID)
            try await notifier.notify([9, 8, 7])
            var iterator = changes.makeAsyncIterator()
            let change = await iterator.next()
            #expect(change?.changed == ["Value": .bytes([9, 8, 7])])

            // Notifying appears once set.
            let before = try await bluetoothd.allProperties(destination: server.uniqueName, path: transferPath, interface: charIface)
            #expect(before["Notifying"] == nil)
            notifier.setNotifying(true)
            let notifying = try await bluetoothd.property(destination: server.uniqueName, path: transferPath, interface: charIface, name: "Notifying")
            #expect(notifying == .bool(true))
        }
    }

    @Test func theAdvertisementIsServedAtItsOwnPath() async throws {
        try await withExport { _, advertisement, _, server, bluetoothd in
            let properties = try await bluetoothd.allProperties(
                destination: server.uniqueName, path: advertisement.path, interface: "org.bluez.LEAdvertisement1")
            #expect(properties == BlesendGATT.advertisement(localName: nil).properties)
            let released = try await bluetoothd.call(
                destination: server.uniqueName, path: advertisement.path, interface: "org.bluez.LEAdvertisement1", member: "Release")
            #expect(released.isEmpty)
            await advertisement.unexport()
            await #expect(throws: DBusError.self) {
                _ = try await bluetoothd.allProperties(
                    destination: server.uniqueName, path: advertisement.path, interface: "org.bluez.LEAdvertisement1")
            }
        }
    }

    @Test func callsFailOnceTheHandlerIsGone() async throws {
        let bus = try TestBus()
        defer { bus.stop() }
        let server = try await DBusConnection.connect(.address(bus.address))
        let bluetoothd = try await DBusConnection.connect(.address(bus.address))
        try await Self.claim("org.bluez", on: bluetoothd)
        let callers = try DBusCallerCheck(owner: "org.bluez")
        try await callers.start(on: server)
        let application = try GattApplicationExport(BlesendGATT.application(versionCharacteristic: false), root: root, bus: server)
        do {
            let handler = RecordingHandler()
            try application.route(characteristic: BlesendGATT.transferCharacteristicUUID, to: handler)
        }
        try await application.export(callers: callers)
        await #expect(throws: DBusError.self) {
            _ = try await bluetoothd.call(destination: server.uniqueName, path: transferPath, interface: charIface, member: "StartNotify")
        }
        await application.unexport()
        await server.close()
        await bluetoothd.close()
    }
}

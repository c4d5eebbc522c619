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

    /// A private bus, the application (and advertisement) exported on `server`, `bluetoothd` calling.
    func withExport(
        _ body: (GattApplicationExport, LEAdvertisementExport, RecordingHandler, DBusConnection, DBusConnection) async throws -> Void
    ) async throws {
        let bus = try TestBus()
        defer { bus.stop() }
        let server = try await DBusConnection.connect(.address(bus.address))
        let bluetoothd = try await DBusConnection.connect(.address(bus.address))
        let handler = RecordingHandler()
        do {
            let application = try GattApplicationExport(BlesendGATT.application(versionCharacteristic: true), root: root, bus: server)
            let advertisement = try LEAdvertisementExport(BlesendGATT.advertisement(localName: nil), path: "/org/blesend/advertisement0", bus: server)
            try application.route(characteristic: BlesendGATT.transferCharacteristicUUID, to: handler)
            try await application.export()
            try await advertisement.export()
            try await body(application, advertisement, handler, server, bluetoothd)
        } catch {
            await server.close()
            await bluetoothd.close()
            throw error
        }
        await server.close()
        await bluetoothd.close()
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
        let application = try GattApplicationExport(BlesendGATT.application(versionCharacteristic: false), root: root, bus: server)
        do {
            let handler = RecordingHandler()
            try application.route(characteristic: BlesendGATT.transferCharacteristicUUID, to: handler)
        }
        try await application.export()
        await #expect(throws: DBusError.self) {
            _ = try await bluetoothd.call(destination: server.uniqueName, path: transferPath, interface: charIface, member: "StartNotify")
        }
        await application.unexport()
        await server.close()
        await bluetoothd.close()
    }
}

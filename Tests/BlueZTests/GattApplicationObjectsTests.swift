import DBus
import Testing
@testable import BlueZ

/// The value model of what a receiver serves, and the D-Bus objects it becomes, against the shapes
/// of BlueZ's doc/org.bluez.GattService.rst, GattCharacteristic.rst and LEAdvertisement.rst.
@Suite("GATT application as values")
struct GattApplicationObjectsTests {
    let service = "/org/blesend/app/service0"
    let transfer = "/org/blesend/app/service0/char0"
    let version = "/org/blesend/app/service0/char1"

    @Test func theReceiversApplicationIsOneServiceWithTwoCharacteristics() {
        let objects = GattApplicationObjects(BlesendGATT.application(versionCharacteristic: true), root: "/org/blesend/app")
        #expect(objects.objects == [
            .init(path: service, interface: "org.bluez.GattService1", properties: [
                "UUID": .string("6f3c0001-8c2e-4b6a-9d2f-7a1e5b0c4d10"),
                "Primary": .bool(true),
                "Characteristics": .objectPaths([transfer, version]),
            ]),
            .init(path: transfer, interface: "org.bluez.GattCharacteristic1", properties: [
                "UUID": .string("6f3c0002-8c2e-4b6a-9d2f-7a1e5b0c4d10"),
                "Service": .objectPath(service),
                "Flags": .strings(["write-without-response", "notify"]),
                "WriteAcquired": .bool(false),
                "NotifyAcquired": .bool(false),
            ]),
            .init(path: version, interface: "org.bluez.GattCharacteristic1", properties: [
                "UUID": .string("6f3c0003-8c2e-4b6a-9d2f-7a1e5b0c4d10"),
                "Service": .objectPath(service),
                "Flags": .strings(["read"]),
            ]),
        ])
        #expect(objects.path(ofCharacteristic: BlesendGATT.transferCharacteristicUUID) == transfer)
        #expect(objects.path(ofCharacteristic: BlesendGATT.versionCharacteristicUUID) == version)
        #expect(objects.path(ofCharacteristic: "6f3c00ff-8c2e-4b6a-9d2f-7a1e5b0c4d10") == nil)
        #expect(objects.characteristics.map(\.declaration.value) == [.handled, .constant([BlesendGATT.protocolVersion])])
    }

    @Test func withoutTheVersionCharacteristic() {
        let objects = GattApplicationObjects(BlesendGATT.application(versionCharacteristic: false), root: "/org/blesend/app")
        #expect(objects.objects.map(\.path) == [service, transfer])
        #expect(objects.objects[0].properties["Characteristics"] == .objectPaths([transfer]))
        #expect(objects.path(ofCharacteristic: BlesendGATT.versionCharacteristicUUID) == nil)
    }

    /// Every object has the properties BlueZ requires, with BlueZ's types; services and
    /// characteristics are numbered in declaration order, each characteristic below its service.
    @Test func objectsHaveBlueZsShapes() {
        let application = GattApplication(services: [
            GattService(uuid: "0000180f-0000-1000-8000-00805f9b34fb", primary: true, characteristics: [
                GattCharacteristic(uuid: "00002a19-0000-1000-8000-00805f9b34fb", flags: [.read, .notify], value: .constant([100])),
            ]),
            GattService(uuid: "6f3c00ff-8c2e-4b6a-9d2f-7a1e5b0c4d10", primary: false, characteristics: [
                GattCharacteristic(uuid: "6f3c01ff-8c2e-4b6a-9d2f-7a1e5b0c4d10", flags: [.writeWithoutResponse], acquiresWrite: true, value: .handled),
                GattCharacteristic(uuid: "6f3c02ff-8c2e-4b6a-9d2f-7a1e5b0c4d10", flags: [.notify], acquiresNotify: true, value: .handled),
            ]),
        ])
        let objects = GattApplicationObjects(application, root: "/x")
        #expect(objects.objects.map(\.path) == ["/x/service0", "/x/service0/char0", "/x/service1", "/x/service1/char0", "/x/service1/char1"])
        let paths = Set(objects.objects.map(\.path))
        let allowedFlags: Set<String> = ["broadcast", "read", "write-without-response", "write", "notify", "indicate"]
        for object in objects.objects {
            let p = object.properties
            #expect(p["UUID"]?.signature == "s")
            switch object.interface {
            case "org.bluez.GattService1":
                #expect(p["Primary"]?.signature == "b")
                #expect(p["Characteristics"]?.signature == "ao")
            case "org.bluez.GattCharacteristic1":
                #expect(p["Service"]?.signature == "o")
                #expect(p["Service"]?.objectPath.map { paths.contains($0) } == true)
                #expect(object.path.hasPrefix((p["Service"]?.objectPath ?? "?") + "/"))
                #expect(p["Flags"]?.signature == "as")
                let flags = Set(p["Flags"]?.strings ?? ["?"])
                #expect(flags.isSubset(of: allowedFlags))
                // Present (as false) only where the socket is offered: presence is what BlueZ reads.
                for name in ["WriteAcquired", "NotifyAcquired"] where p[name] != nil { #expect(p[name] == .bool(false)) }
            default:
                Issue.record("unexpected interface \(object.interface)")
            }
        }
        #expect(objects.objects[2].properties["Primary"] == .bool(false))
        #expect(objects.objects[3].properties["WriteAcquired"] == .bool(false))
        #expect(objects.objects[3].properties["NotifyAcquired"] == nil)
        #expect(objects.objects[4].properties["WriteAcquired"] == nil)
        #expect(objects.objects[4].properties["NotifyAcquired"] == .bool(false))
    }

    @Test func theAdvertisementNamesTheServiceAndNoOneUnlessAsked() {
        #expect(BlesendGATT.advertisement(localName: nil).properties == [
            "Type": .string("peripheral"),
            "ServiceUUIDs": .strings([BlesendGATT.serviceUUID]),
            "Discoverable": .bool(true),
        ])
        #expect(BlesendGATT.advertisement(localName: "desk").properties["LocalName"] == .string("desk"))
        let bare = LEAdvertisement(kind: .broadcast, serviceUUIDs: [])
        #expect(bare.properties == ["Type": .string("broadcast")])
    }
}

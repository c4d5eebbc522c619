import EventSchema
import BluetoothdStandIn
import BlueZ
import DBus
import Discovery
import Foundation
import Keys
import Testing
import TestSupport
@testable import BlesendCLI

/// `blesend scan`: the rows (order, the --min-rssi cut, the table, the `nearby` events), and the
/// real binary against the stand-in bluetoothd.
@Suite struct ScanRowTests {
    static let alice = TrustStore.Peer(name: "alice", key: Identity.generate().publicKey)

    static func receiver(_ address: String, rssi: Int16?, data: [UInt8]? = nil, lists: Bool = false) -> NearbyReceiver {
        NearbyReceiver(device: "/org/bluez/hci0/dev_" + address.split(separator: ":").joined(separator: "_"), address: address,
                       addressType: "random", rssi: rssi, serviceData: data, listsService: lists)
    }

    @Test func strongestFirstUnknownLastTiesByAddressWeakerLeftOut() {
        let reader = AdvertisementReader(identity: nil, receivers: [])
        let (rows, weaker) = ScanRow.rows([
            Self.receiver("00:00:00:00:00:05", rssi: nil, lists: true),
            Self.receiver("00:00:00:00:00:04", rssi: -70, lists: true),
            Self.receiver("00:00:00:00:00:03", rssi: -40, lists: true),
            Self.receiver("00:00:00:00:00:02", rssi: -70, lists: true),
            Self.receiver("00:00:00:00:00:01", rssi: -95, lists: true),
            Self.receiver("00:00:00:00:00:06", rssi: -30),   // neither: not a receiver, not counted
        ], reader: reader, minimumRSSI: -80)
        #expect(rows.map(\.address) == ["00:00:00:00:00:03", "00:00:00:00:00:02", "00:00:00:00:00:04", "00:00:00:00:00:05"])
        #expect(weaker == 1)
    }

    /// One row per mode: the table's RECEIVER column and the `nearby` event, which the schema takes.
    @Test(arguments: [
        (AdvertisedMode.pairing(name: "kitchen"), "\"kitchen\" (its own name for itself: blesend pair)", #""mode":"pairing","name":"kitchen","fingerprint":null,"yours":null"#),
        (.pairing(name: nil), "(no name) (its own name for itself: blesend pair)", #""mode":"pairing","name":null,"fingerprint":null,"yours":null"#),
        (.privateDiscovery(.pinned(alice)), "alice [\(alice.key.fingerprint)], lists you",
         #""mode":"private","name":"alice","fingerprint":"\#(alice.key.fingerprint)","yours":true"#),
        (.privateDiscovery(.nobodyWeKnow), "lists none of your pinned receivers with your key", #""mode":"private","name":null,"fingerprint":null,"yours":false"#),
        (.privateDiscovery(.unchecked), "(no key of yours to match it with)", #""mode":"private","name":null,"fingerprint":null,"yours":null"#),
        (.plain, "(only a connection tells whose)", #""mode":"plain","name":null,"fingerprint":null,"yours":null"#),
    ])
    func eachModeShowsAndReports(mode: AdvertisedMode, column: String, json: String) throws {
        let row = ScanRow(device: "/org/bluez/hci0/dev_5A_00_00_00_00_01", address: "5A:00:00:00:00:01", addressType: "random", rssi: -61, mode: mode)
        #expect(row.tableLine == " -61  \(mode.word.padding(7))  5A:00:00:00:00:01  random  \(column)")
        let text = row.json.text
        #expect(text == #"{"event":"nearby","v":1,"device":"/org/bluez/hci0/dev_5A_00_00_00_00_01","address":"5A:00:00:00:00:01","address_type":"random","rssi":-61,"# + json + "}")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let schema = try JSONSchemaSubset.load()
        #expect(schema.violations(of: object).isEmpty, "\(text): \(schema.violations(of: object))")
    }

    @Test func anUnknownRSSIAndTypeShowAsQuestionMarks() {
        let row = ScanRow(device: "/d", address: "00:AA:01:00:00:00", addressType: nil, rssi: nil, mode: .plain)
        #expect(row.tableLine == "   ?  plain    00:AA:01:00:00:00  ?       (only a connection tells whose)")
        #expect(row.json.text.contains(#""address_type":null,"rssi":null"#))
    }

    @Test func noneFoundSaysSoWithExit68AndWhyWhenSomeWereWeaker() {
        let none = Scan.noneFound(weaker: 0, minRSSI: -80)
        #expect(none.status == .peerNotFound && none.message == "no receivers found nearby")
        #expect(Scan.noneFound(weaker: 2, minRSSI: -80).hint?.contains("2 more were weaker than -80 dBm") == true)
    }

    @Test func noPinnedFolderIsNobodyPinned() throws {
        #expect(try PinnedReceivers.load(directory: "/nonexistent/blesend/receivers").isEmpty)
    }
}

/// The built `blesend scan` on a private bus with the stand-in bluetoothd reporting a pairing
/// receiver, a private-discovery receiver that lists us under a key we pinned, a plain one, a weak
/// one and a device that is no receiver.
@Test(.timeLimit(.minutes(2)))
func scanListsTheReceiversTheStandInReports() async throws {
    let dir = try scratch()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let config = "\(dir)/config"
    try FileManager.default.createDirectory(atPath: "\(config)/blesend/receivers", withIntermediateDirectories: true)
    for key in ["\(config)/blesend/id", "\(dir)/alice"] {
        let run = try blesend(["keygen", "-o", key])
        #expect(run.status == 0, "\(run.stderr)")
    }
    try FileManager.default.copyItem(atPath: "\(dir)/alice.pub", toPath: "\(config)/blesend/receivers/alice.pub")
    let us = try KeyFile.loadIdentity(path: "\(config)/blesend/id")
    let alice = try KeyFile.loadIdentity(path: "\(dir)/alice")
    let listing = DiscoveryAdvertisement.make(salt: .random(), keys: [try DiscoveryKey.forReceiver(identity: alice, sender: us.publicKey)])

    let bus = try TestBus()
    defer { bus.stop() }
    let bluetoothd = try await FakeBluetoothd(address: bus.address)
    let service = "6f3c0001-8c2e-4b6a-9d2f-7a1e5b0c4d10"
    func device(_ address: String, _ rssi: Int16, type: String = "random", uuids: [String] = [], data: [UInt8]? = nil) -> (String, [String: DBusValue]) {
        var props: [String: DBusValue] = ["Adapter": .objectPath(FakeBluetoothd.adapter), "Address": .string(address),
                                          "AddressType": .string(type), "RSSI": .int16(rssi), "UUIDs": .strings(uuids)]
        if let data { props["ServiceData"] = .properties([service: .bytes(data)]) }
        return (FakeBluetoothd.adapter + "/dev_" + address.split(separator: ":").joined(separator: "_"), props)
    }
    try bluetoothd.serveDiscovery(nearby: Dictionary(uniqueKeysWithValues: [
        device("5A:00:00:00:00:01", -50, data: PairingAdvertisement(name: "kitchen").bytes),
        device("5A:00:00:00:00:02", -60, data: listing),
        device("00:AA:01:00:00:03", -70, type: "public", uuids: [service]),
        device("5A:00:00:00:00:04", -95, uuids: [service]),
        device("5A:00:00:00:00:05", -30, uuids: ["0000180f-0000-1000-8000-00805f9b34fb"]),
    ]))
    let env = ["DBUS_SYSTEM_BUS_ADDRESS": bus.address, "XDG_CONFIG_HOME": config]
    // Off the cooperative pool, so that the stand-in keeps answering meanwhile.
    func scan(_ args: [String]) async throws -> CommandRun {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try CommandRun.run("blesend", ["scan", "--timeout", "1"] + args, environment: env, timeout: 20) })
            }
        }
    }

    let json = try await scan(["--json"])
    #expect(json.status == 0, "\(json.stderr)")
    let lines = json.stdout.split(separator: "\n").map(String.init)
    let schema = try JSONSchemaSubset.load()
    let objects = try lines.map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
    for (line, object) in zip(lines, objects) { #expect(schema.violations(of: object).isEmpty, "\(line)") }
    #expect(objects.map { $0["address"] as? String } == ["5A:00:00:00:00:01", "5A:00:00:00:00:02", "00:AA:01:00:00:03"], "\(json.stdout)")
    #expect(objects.map { $0["mode"] as? String } == ["pairing", "private", "plain"])
    #expect(objects[0]["name"] as? String == "kitchen")
    #expect(objects[1]["name"] as? String == "alice" && objects[1]["yours"] as? Bool == true
        && objects[1]["fingerprint"] as? String == alice.publicKey.fingerprint)
    #expect(objects[2]["address_type"] as? String == "public" && objects[2]["rssi"] as? Int == -70)

    let table = try await scan([])
    #expect(table.status == 0, "\(table.stderr)")
    #expect(table.stdout == """
        RSSI  MODE     ADDRESS            TYPE    RECEIVER
         -50  pairing  5A:00:00:00:00:01  random  "kitchen" (its own name for itself: blesend pair)
         -60  private  5A:00:00:00:00:02  random  alice [\(alice.publicKey.fingerprint)], lists you
         -70  plain    00:AA:01:00:00:03  public  (only a connection tells whose)

        """, "\(table.stdout)")

    let none = try await scan(["--min-rssi=-20"])
    #expect(none.status == 68, "\(none.stderr)")
    #expect(none.stdout.isEmpty)
    #expect(none.stderr.contains("blesend: error: no receivers found nearby") && none.stderr.contains("4 more were weaker than -20 dBm"),
            "\(none.stderr)")
    await bluetoothd.connection.close()
}

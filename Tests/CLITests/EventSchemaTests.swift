import EventSchema
import Foundation
import Testing

/// The schema checker (Sources/Tools/EventSchema) that the tests and the lab's `blesend-labcheck
/// schema` share, against docs/json-events.schema.json: one good line per event the schema knows,
/// then each of them broken every way the contract forbids, and widened the way it allows.
@Suite struct EventSchemaTests {
    static let fingerprint = "4807 b78a d4e6 cc2f 1781 5a1c 6f36 720e"
    static let device = "/org/bluez/hci1/dev_00_AA_01_00_00_00"

    /// One line per event, as the tools write them (field order included).
    static let samples: [String] = [
        #"{"event":"scanning","v":1,"adapter":"hci1","min_rssi":-80}"#,
        #"{"event":"listening","v":1,"adapter":null,"fingerprint":"\#(fingerprint)","trusted":2,"max_links":3}"#,
        #"{"event":"admission","v":1,"decision":"admitted","detail":"admitted /org/bluez/hci0/dev_X"}"#,
        #"{"event":"found","v":1,"device":"\#(device)"}"#,
        #"{"event":"busy","v":1,"device":"\#(device)","retry_in":4.5,"ahead":null}"#,
        #"{"event":"resolved","v":1}"#,
        #"{"event":"connected","v":1,"device":"\#(device)","transport":"l2cap","payload":4096,"mtu":null,"phy":"2M"}"#,
        #"{"event":"handshake","v":1,"peer":"receiver","fingerprint":"\#(fingerprint)"}"#,
        #"{"event":"first-contact","v":1,"peer":"receiver","code":"123 456"}"#,
        #"{"event":"refused","v":1,"reason":"not trusted"}"#,
        #"{"event":"progress","v":1,"name":"a.bin","bytes":65536,"total":null,"rate":41012.5,"mtu":247,"transport":"gatt"}"#,
        #"{"event":"resumed","v":1,"name":"a.bin","offset":4096}"#,
        #"{"event":"file-done","v":1,"name":"a.bin","stored_name":"a-1.bin","path":"/tmp/a-1.bin","bytes":10,"seconds":1.5,"peer":"alice"}"#,
        #"{"event":"folder-done","v":1,"name":"photos","stored_name":"photos","path":"/tmp/photos","files":3,"peer":"alice"}"#,
        #"{"event":"kept-removed","v":1,"name":"a.bin","reason":"room"}"#,
        #"{"event":"warning","v":1,"message":"skipped a symlink"}"#,
        #"{"event":"error","v":1,"code":"peer-refused","exit":66,"summary":"untrusted or mismatched peer","message":"refused","hint":null}"#,
        #"{"event":"done","v":1,"files":1,"failed":0,"bytes":10,"seconds":2.0,"air_bytes":10}"#,
        #"{"event":"partial","v":1,"name":"a.bin","bytes":4096,"total":8192,"peer":null,"fingerprint":"\#(fingerprint)","saved_at":1700000000,"expires_at":1700600000,"removed":false}"#,
        #"{"event":"nearby","v":1,"device":"\#(device)","address":"00:AA:01:00:00:00","address_type":"public","rssi":-61,"mode":"plain","name":null,"fingerprint":null,"yours":null}"#,
        #"{"event":"history","v":1,"time":1700000000,"direction":"sent","result":"saved","resumed":false,"path":"/tmp/a.bin","bytes":10,"air_bytes":null,"blake2b":null,"peer":"alice","fingerprint":"\#(fingerprint)","transport":"gatt","detail":null}"#,
        #"{"event":"trusted","v":1,"name":"alice","fingerprint":"\#(fingerprint)","key":"blesend-pub1:x","path":"/etc/blesend/trusted/alice.pub"}"#,
        #"{"event":"receiver","v":1,"name":"pi","fingerprint":"\#(fingerprint)","key":"blesend-pub1:x","path":"/home/a/.config/blesend/receivers/pi.pub"}"#,
        #"{"event":"pairing-code","v":1,"code":"1234 5678","name":"pi","fingerprint":"\#(fingerprint)"}"#,
        #"{"event":"pairing-failed","v":1,"device":"\#(device)","reason":"pairing.wrongCode","retry_in":30}"#,
        #"{"event":"pairing-pause","v":1,"seconds":30}"#,
        #"{"event":"paired","v":1,"peer":"pi","fingerprint":"\#(fingerprint)","path":"/home/a/.config/blesend/receivers/pi.pub"}"#,
        #"{"event":"pairing-ended","v":1,"paired":false}"#,
        #"{"event":"status","v":1,"adapter":null,"fingerprint":"\#(fingerprint)","advertising":true,"trusted":2,"max_links":3,"out":"/var/lib/blesend/incoming","partials":null,"status":"receiving a.bin from alice 45 %, 1 link","links":[{"channel":1,"device":"\#(device)","transport":"l2cap","peer":"alice","fingerprint":"\#(fingerprint)","file":"a.bin","bytes":10,"total":20,"rate":null,"eta":null}],"recent":[{"name":"b.bin","peer":"alice","bytes":5,"saved":true}]}"#,
        #"{"event":"doctor","v":1,"checks":[{"name":"bus","ok":true,"detail":"unix:path=/run/dbus/system_bus_socket","fix":null,"severity":"ok"}],"ok":true,"role":"receiver"}"#,
    ]

    static func object(_ line: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    @Test func everyEventOfTheSchemaHasAGoodSampleThatMatches() throws {
        let schema = try JSONSchemaSubset.load()
        let sampled = try Self.samples.map { try Self.object($0)["event"] as? String ?? "?" }
        #expect(Set(sampled) == Set(schema.events), "an event without a sample, or a sample of no event")
        #expect(sampled.count == schema.events.count)
        for line in Self.samples { #expect(schema.violations(ofLine: line).isEmpty, "\(line): \(schema.violations(ofLine: line))") }
    }

    /// The contract: fields may be added (to the event and to doctor's checks) without breaking it.
    @Test func anUnknownFieldIsAccepted() throws {
        let schema = try JSONSchemaSubset.load()
        for line in Self.samples {
            var object = try Self.object(line)
            object["added_in_a_later_release"] = ["any": [1, "thing"]]
            #expect(schema.violations(of: object).isEmpty, "\(line) + a new field: \(schema.violations(of: object))")
        }
        let text = try String(contentsOfFile: JSONSchemaSubset.path, encoding: .utf8)
        #expect(!text.contains("additionalProperties"), "no object of the schema is closed")
        let doctor = #"{"event":"doctor","v":1,"checks":[{"name":"bus","ok":true,"detail":"d","fix":null,"severity":"ok","new":1}],"ok":true,"role":"sender","new":2}"#
        #expect(schema.violations(ofLine: doctor).isEmpty, "\(schema.violations(ofLine: doctor))")
    }

    /// Each required field left out, and each field given a type no schema allows, is caught.
    @Test func aMissingRequiredFieldOrAWrongTypeIsCaught() throws {
        let schema = try JSONSchemaSubset.load()
        for line in Self.samples {
            let object = try Self.object(line)
            for key in object.keys {
                var wrong = object
                wrong[key] = ["not": "this"]
                #expect(!schema.violations(of: wrong).isEmpty, "\(line) with \(key) an object")
            }
            let event = try #require(object["event"] as? String)
            #expect(schema.required(of: event).isSubset(of: Set(object.keys)), "\(line) lacks a required field")
            #expect(schema.required(of: event).isSuperset(of: ["event", "v"]))
            for key in schema.required(of: event) {
                var without = object
                without[key] = nil
                #expect(!schema.violations(of: without).isEmpty, "\(line) without \(key)")
            }
        }
    }

    @Test func theVersionIsRequiredAndOne() throws {
        let schema = try JSONSchemaSubset.load()
        var object = try Self.object(#"{"event":"resolved","v":1}"#)
        #expect(schema.violations(of: object).isEmpty)
        object["v"] = 2
        #expect(!schema.violations(of: object).isEmpty, "v 2 is another contract")
        object["v"] = nil
        #expect(schema.violations(of: object) == ["missing v"])
        #expect(schema.violations(ofLine: #"{"v":1}"#) == ["missing event"])
    }

    @Test func valuesOutsideAnEnumOrPatternOrConstAreCaught() throws {
        let schema = try JSONSchemaSubset.load()
        #expect(!schema.violations(ofLine: #"{"event":"nonsense","v":1}"#).isEmpty)
        #expect(!schema.violations(ofLine: #"{"event":"error","v":1,"code":"untrusted or mismatched peer","exit":66,"summary":"s","message":"m","hint":null}"#).isEmpty,
                "an error code is kebab-case")
        #expect(!schema.violations(ofLine: #"{"event":"connected","v":1,"device":null,"transport":"usb","payload":1,"mtu":null,"phy":null}"#).isEmpty)
        #expect(!schema.violations(ofLine: #"{"event":"pairing-code","v":1,"code":"12345678","name":"pi","fingerprint":"f"}"#).isEmpty)
        #expect(!schema.violations(ofLine: #"{"event":"doctor","v":1,"checks":[{"name":"bus","ok":true,"detail":"d","fix":null,"severity":"bad"}],"ok":true,"role":"sender"}"#).isEmpty)
        #expect(!schema.violations(ofLine: #"{"event":"doctor","v":1,"checks":[{"name":"bus"}],"ok":true,"role":"sender"}"#).isEmpty)
        #expect(!schema.violations(ofLine: #"{"event":"pairing-ended","v":1,"paired":0}"#).isEmpty, "0 is not false")
        #expect(!schema.violations(ofLine: #"{"event":"pairing-pause","v":1,"seconds":1.5}"#).isEmpty, "1.5 is not an integer")
        #expect(schema.violations(ofLine: "not json") == ["not JSON"])
        #expect(!schema.violations(ofLine: "[1]").isEmpty)
    }

    /// The checker refuses a schema with a keyword it does not know, rather than ignore it.
    @Test func aSchemaBeyondTheSubsetIsRefused() {
        #expect(throws: EventSchema.SchemaError.self) { try EventSchema(data: Data(#"{"type":"object","minProperties":1}"#.utf8)) }
        #expect(throws: EventSchema.SchemaError.self) { try EventSchema(data: Data(#"{"type":"thing"}"#.utf8)) }
        #expect(throws: EventSchema.SchemaError.self) { try EventSchema(data: Data(##"{"oneOf":[{"items":{"$ref":"#"}}]}"##.utf8)) }
    }

    /// A lab log: the tools' lines checked, other lines (standard error caught with them) left
    /// alone, and a Python helper's log (`{"event": ` with a space) not taken for one of ours.
    @Test func aLabLogIsCheckedLineByLine() throws {
        let schema = try JSONSchemaSubset.load()
        let good = Self.samples.joined(separator: "\n") + "\nblesend: error: something\n"
        let check = EventLogCheck(text: good, schema: schema)
        #expect(!check.skipped && check.checked == Self.samples.count && check.bad.isEmpty, "\(check.bad)")
        let bad = EventLogCheck(text: #"{"event":"resolved","v":1}"# + "\n" + #"{"event":"done","files":1}"# + "\n{broken\n", schema: schema)
        #expect(bad.bad.map(\.number) == [2, 3])
        #expect(bad.bad.first?.problems == ["missing v"])
        let python = EventLogCheck(text: #"{"event": "dropped", "t": 1.5, "after_s": 3}"# + "\n", schema: schema)
        #expect(python.skipped)
        #expect(EventLogCheck(text: "plain text\n", schema: schema).skipped)
    }
}

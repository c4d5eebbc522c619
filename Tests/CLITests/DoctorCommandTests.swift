import EventSchema
import Foundation
import Testing
import TestSupport

/// `blesend doctor` and `blerecv doctor` as built: output, `--json` and exit status. The tools
/// read this machine's files and kernel, so these tests look only at what the bus decides.

@Test func doctorWithoutBluetoothdSaysSoAndExits67() throws {
    let bus = try TestBus()
    defer { bus.stop() }
    let run = try blesend(["doctor"], env: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
    #expect(run.status == 67, "\(run.stdout)\(run.stderr)")
    let lines = run.stdout.split(separator: "\n").map(String.init)
    #expect(lines.first == "✓ system bus      \(bus.address) (DBUS_SYSTEM_BUS_ADDRESS)")
    #expect(lines.contains { $0.hasPrefix("✗ bluetoothd") && $0.contains("bluetoothd is not running") })
    #expect(run.stdout.contains("fix: sudo systemctl start bluetooth") || run.stdout.contains("fix: sudo apt-get install bluez"))
    #expect(run.stdout.contains("not checked until the ✗ above is fixed: permission, adapter, powered, LE, device name\n"))
    // How many problems depends on this machine's rfkill and main.conf too.
    #expect(lines.last?.hasPrefix("blesend doctor: ") == true && lines.last?.hasSuffix("the sender cannot work here (exit 67)") == true)
    #expect(run.stderr.isEmpty)
}

@Test func doctorJSONIsOneObjectOnStandardOutput() throws {
    let bus = try TestBus()
    defer { bus.stop() }
    let run = try blerecv(["doctor", "--json", "--adapter", "hci1"], env: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
    #expect(run.status == 67)
    #expect(run.stdout.hasSuffix("}\n"))
    #expect(run.stdout.dropLast().contains("\n") == false, "one line")
    let object = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
    #expect(object["event"] as? String == "doctor")
    #expect(object["v"] as? Int == 1)
    #expect(try JSONSchemaSubset.load().violations(of: object).isEmpty)
    #expect(object["role"] as? String == "receiver")
    #expect(object["ok"] as? Bool == false)
    let checks = try #require(object["checks"] as? [[String: Any]])
    let bluetoothd = try #require(checks.first { $0["name"] as? String == "bluetoothd" })
    #expect(bluetoothd["ok"] as? Bool == false)
    #expect(bluetoothd["severity"] as? String == "fail")
    #expect(bluetoothd["fix"] is String)
}

@Test func doctorWithoutABusExits67() throws {
    let run = try blesend(["doctor"], env: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/blesend-doctor-bus"])
    #expect(run.status == 67)
    #expect(run.stdout.hasPrefix("✗ system bus"))
    #expect(run.stdout.contains("fix: DBUS_SYSTEM_BUS_ADDRESS points at no bus"))
}

@Test func doctorHelpTeachesWhatItChecksPerRole() throws {
    let sender = try blesend(["doctor", "--help"])
    let receiver = try blerecv(["doctor", "--help"])
    for run in [sender, receiver] {
        #expect(run.status == 0)
        #expect(run.stdout.contains("Examples:"))
        #expect(run.stdout.contains("Exit codes: 0"))
        #expect(run.stdout.contains("67 a check failed"))
        #expect(run.stdout.contains("--adapter <hciN>"))
    }
    #expect(sender.stdout.contains("blesend doctor --adapter hci1"))
    #expect(!sender.stdout.contains("advertising "))
    #expect(receiver.stdout.contains("advertising "))
    #expect(try blesend(["--help"]).stdout.contains("doctor"))
    #expect(try blerecv(["--help"]).stdout.contains("doctor"))
}

import BlueZ
import Testing
@testable import BlesendCLI

/// blerecv says once at start when the name anyone who connects reads (the adapter's alias) names
/// this machine or its user, with the fix; a neutral or default name, or none known, says nothing
/// (issue 31).
@Test func blerecvWarnsAtStartWhenTheAdaptersNameGivesTheMachineAway() {
    func adapter(_ name: String, alias: String?) -> AdapterStatus {
        AdapterStatus(path: "/org/bluez/\(name)", address: "00:AA:01:00:00:00", powered: true, alias: alias)
    }
    let adapters = [adapter("hci0", alias: "orchard-laptop"), adapter("hci1", alias: "BlueZ 5.66")]
    let warning = ReceiveOperation.deviceNameWarning(adapters, adapter: nil, hostname: "orchard-laptop.local", userName: "alice")
    #expect(warning?.hasPrefix("hci0 is called \"orchard-laptop\" (the host name)") == true, "\(warning ?? "nil")")
    #expect(warning?.contains("bluetoothctl system-alias") == true)
    #expect(ReceiveOperation.deviceNameWarning(adapters, adapter: "hci1", hostname: "orchard-laptop", userName: "alice") == nil)
    #expect(ReceiveOperation.deviceNameWarning([adapter("hci0", alias: "alice's phone")], adapter: "hci0", hostname: "h", userName: nil) != nil)
    #expect(ReceiveOperation.deviceNameWarning([adapter("hci0", alias: nil)], adapter: nil, hostname: "orchard", userName: nil) == nil)
    #expect(ReceiveOperation.deviceNameWarning(adapters, adapter: "hci7", hostname: "orchard-laptop", userName: nil) == nil)
}

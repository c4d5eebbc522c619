import BlueZ
import Testing
@testable import BlesendCLI

/// `blerecv --private-discovery` and the kernel's address privacy: advertise only with private
/// addresses, or when told to anyway.
@Suite("private discovery gate")
struct PrivateDiscoveryGateTests {
    static let rows: [(AddressPrivacy, Bool, PrivateDiscoveryGate.Verdict?)] = [
        (.on, false, .advertise),
        (.on, true, .advertise),
        (.off, false, .refuse(.privacyOff(adapter: "hci0"))),
        (.unknown(.managementInterface(.timeout)), false, .refuse(.privacyUnknown(adapter: "hci0", reason: .managementInterface(.timeout)))),
        (.off, true, nil),        // advertises with a warning
        (.unknown(.managementInterface(.timeout)), true, nil),
    ]

    @Test(arguments: 0..<rows.count)
    func judges(_ row: Int) {
        let (privacy, allow, wanted) = Self.rows[row]
        let verdict = PrivateDiscoveryGate.judge(privacy, adapter: "hci0", allowPublicAddress: allow)
        if let wanted {
            #expect(verdict == wanted)
        } else if case .advertiseAnyway(let warning) = verdict {
            #expect(warning.contains("hci0"))
        } else {
            Issue.record("\(privacy), allowed: \(verdict)")
        }
    }

    @Test func aRefusalExitsWithItsOwnStatusAndSaysHowToTurnPrivacyOn() {
        for refusal in [PrivateDiscoveryGate.Refusal.privacyOff(adapter: "hci0"), .privacyUnknown(adapter: "hci0", reason: .managementInterface(.timeout))] {
            let error = CLIError(refusal)
            #expect(error.status == .addressNotPrivate)
            #expect(error.status.rawValue == 78)
            #expect(error.hint?.contains("Privacy = device") == true)
            #expect(error.hint?.contains("/etc/bluetooth/main.conf") == true)
        }
        // 78 is no other failure's status.
        #expect(ExitStatus.allCases.filter { $0.rawValue == 78 } == [.addressNotPrivate])
    }
}

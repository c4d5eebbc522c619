#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import BlesendCLI

/// main.conf as bluetoothd's parser (GLib's key files) reads it, and what `doctor` makes of it.
@Suite("doctor: main.conf")
struct BluetoothdMainConfTests {
    @Test func commentsSectionsSpacesAndUnknownKeys() {
        let conf = BluetoothdMainConf(parsing: """
            # a comment
               # an indented comment
            [General]
            ControllerMode = le
            Privacy=device
            SomethingNew = whatever

            [GATT]
              ExchangeMTU   =   100\u{20}\u{20}
            Channels = 1 # GLib keeps this in the value
            [General]
            Privacy = off
            """)
        #expect(conf.malformedLines.isEmpty)
        #expect(conf.value("General", "ControllerMode") == "le")
        #expect(conf.value("General", "Privacy") == "off", "a key given twice keeps the later value; sections merge")
        #expect(conf.value("General", "SomethingNew") == "whatever")
        #expect(conf.value("GATT", "ExchangeMTU") == "100")
        #expect(conf.value("GATT", "Channels") == "1 # GLib keeps this in the value")
        #expect(conf.value("general", "ControllerMode") == nil, "sections are case-sensitive")
        #expect(conf.value("GATT", "exchangemtu") == nil, "keys are case-sensitive")
        #expect(conf.value("GATT", "Cache") == nil)
    }

    @Test func windowsLineEndingsAndEmptyValues() {
        let conf = BluetoothdMainConf(parsing: "[GATT]\r\nExchangeMTU = 48\r\nChannels =\r\n")
        #expect(conf.malformedLines.isEmpty)
        #expect(conf.value("GATT", "ExchangeMTU") == "48")
        #expect(conf.value("GATT", "Channels") == "")
    }

    @Test(arguments: [
        ("[GATT]\nExchangeMTU 48\n", [2]),          // no =
        ("ExchangeMTU = 48\n[GATT]\n", [1]),        // a key before any section
        ("[GATT\nExchangeMTU = 48\n", [1, 2]),      // not a section, so the key has none either
        ("[GATT] trailing\n", [1]),
        ("[]\n", [1]),
        ("[GATT]\n = 48\n", [2]),                   // no key
        ("[GATT]   \n# fine\n\nExchangeMTU=48\n", []),
    ])
    func linesGLibRejects(_ text: String, _ lines: [Int]) {
        #expect(BluetoothdMainConf(parsing: text).malformedLines == lines)
    }

    @Test(arguments: [
        (nil, DoctorCheck.Severity.ok),
        ("517", .ok), ("247", .ok),
        ("246", .warn), ("100", .warn), ("23", .warn),
        ("22", .warn), ("600", .warn), ("abc", .warn), ("100 # small", .warn),
    ] as [(String?, DoctorCheck.Severity)])
    func exchangeMTU(_ value: String?, _ severity: DoctorCheck.Severity) {
        let check = DoctorJudge.exchangeMTUCheck(value, path: "/etc/bluetooth/main.conf")
        #expect(check.severity == severity, "\(value ?? "nil"): \(check.detail)")
        if severity == .warn {
            #expect(check.fix == "remove ExchangeMTU from [GATT] in /etc/bluetooth/main.conf, then: sudo systemctl restart bluetooth")
        }
    }

    @Test func aSmallExchangeMTUWarnsInTheWordsOfTheFix() {
        let check = DoctorJudge.exchangeMTUCheck("100", path: "/etc/bluetooth/main.conf")
        #expect(check.severity == .warn)
        #expect(check.detail.contains("small MTU: GATT will be slow; remove ExchangeMTU"))
    }

    @Test func controllerModeBREDRTurnsLEOffAndFails() {
        #expect(DoctorJudge.controllerModeCheck(nil, path: "p").severity == .ok)
        #expect(DoctorJudge.controllerModeCheck("dual", path: "p").severity == .ok)
        #expect(DoctorJudge.controllerModeCheck("le", path: "p").severity == .ok)
        let bredr = DoctorJudge.controllerModeCheck("bredr", path: "/etc/bluetooth/main.conf")
        #expect(bredr.severity == .fail)
        #expect(bredr.fix == "set ControllerMode = dual in [General] in /etc/bluetooth/main.conf, then: sudo systemctl restart bluetooth")
        #expect(DoctorJudge.controllerModeCheck("both", path: "p").severity == .warn)
    }

    @Test func gattChannelsAndPrivacyAreReported() {
        #expect(DoctorJudge.gattChannelsCheck(nil, path: "p").detail == "not set: 3 (EATT on)")
        #expect(DoctorJudge.gattChannelsCheck("1", path: "p") == .ok(.gattChannels, "1 (EATT off)"))
        #expect(DoctorJudge.gattChannelsCheck("6", path: "p").severity == .warn)
        #expect(DoctorJudge.gattChannelsCheck("1 # one", path: "p").severity == .warn)
        #expect(DoctorJudge.privacyCheck("device") == .ok(.privacy, "device"))
        #expect(DoctorJudge.privacyCheck(nil).severity == .ok)
    }

    @Test func aFileGLibRejectsWarnsAndNamesTheLine() {
        let checks = DoctorJudge.mainConfChecks(.read(path: "/etc/bluetooth/main.conf", BluetoothdMainConf(parsing: "[GATT]\nExchangeMTU 48\n")))
        let file = checks.first { $0.name == .mainConf }
        #expect(file?.severity == .warn)
        #expect(file?.detail.contains("line 2") == true)
        #expect(file?.fix == "fix or remove line 2 in /etc/bluetooth/main.conf, then: sudo systemctl restart bluetooth")
        #expect(checks.map(\.name) == [.mainConf, .controllerMode, .privacy, .exchangeMTU, .gattChannels])

        let unreadable = DoctorJudge.mainConfChecks(.unreadable(path: "/etc/bluetooth/main.conf", reason: .system(errno: EISDIR)))
        #expect(unreadable.map(\.name) == [.mainConf])
        #expect(unreadable.first?.severity == .warn)
        #expect(DoctorJudge.mainConfChecks(.absent(path: "/etc/bluetooth/main.conf")).allSatisfy { $0.severity == .ok })
    }
}

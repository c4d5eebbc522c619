import BluetoothdStandIn
import Foundation
import Testing
import TestSupport
@testable import BlesendCLI

/// A pretend machine for `doctor`'s gatherer: a main.conf, an rfkill tree with hci0's switch, and a
/// `bluetoothd` that prints 5.66 for `--version`, in a scratch folder.
struct DoctorMachine {
    let dir: String

    init(mainConf: String = "[General]\n[GATT]\n", rfkillSoftBlocked: Bool = false, bluetoothdScript: String? = "echo 5.66") throws {
        dir = NSTemporaryDirectory() + "blesend-doctor-\(UUID().uuidString)"
        let files = FileManager.default
        try files.createDirectory(atPath: "\(dir)/rfkill/rfkill0", withIntermediateDirectories: true)
        try mainConf.write(toFile: "\(dir)/main.conf", atomically: true, encoding: .utf8)
        for (name, value) in [("name", "hci0"), ("type", "bluetooth"), ("soft", rfkillSoftBlocked ? "1" : "0"), ("hard", "0")] {
            try "\(value)\n".write(toFile: "\(dir)/rfkill/rfkill0/\(name)", atomically: true, encoding: .utf8)
        }
        if let bluetoothdScript {
            try Self.writeScript(bluetoothdScript, to: "\(dir)/bluetoothd")
        }
    }

    func sources(bus: String) -> DoctorSources {
        DoctorSources(busAddress: bus, mainConf: "\(dir)/main.conf", rfkill: "\(dir)/rfkill",
                      bluetoothdBinaries: ["\(dir)/bluetoothd"], versionTimeout: .seconds(10),
                      addressPrivacy: { _ in .on }, clock: { .synchronised })
    }

    func report(bus: String, _ role: DoctorRole, adapter: String? = nil) async -> DoctorReport {
        DoctorJudge.report(await DoctorFacts.gather(sources(bus: bus)), role: role, adapter: adapter)
    }

    func remove() { try? FileManager.default.removeItem(atPath: dir) }

    /// Writes an executable shell script through a close-on-exec descriptor. Foundation's
    /// `write(toFile:)` does not set the flag: a process another test forks meanwhile (a
    /// dbus-daemon) would keep the file open for writing for its whole life, and starting the
    /// script would fail with ETXTBSY ("text file busy").
    static func writeScript(_ body: String, to path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o755)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(fd) }
        let bytes = Array("#!/bin/sh\n\(body)\n".utf8)
        guard bytes.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == bytes.count else { throw POSIXError(.EIO) }
    }
}

/// The whole of `doctor` (gatherer and judge) against a private bus with the stand-in bluetoothd,
/// and the gatherer's other edges (files, the version subprocess).
@Suite("doctor against a stand-in bluetoothd", .timeLimit(.minutes(2)))
struct DoctorStandInTests {
    @Test func aGoodSystemPassesForBothRoles() async throws {
        let machine = try DoctorMachine()
        defer { machine.remove() }
        let bus = try TestBus()
        defer { bus.stop() }
        let bluetoothd = try await FakeBluetoothd(address: bus.address)
        for role in [DoctorRole.sender, .receiver] {
            let report = await machine.report(bus: bus.address, role)
            #expect(report.exitStatus == .success, "\(role): \(report.text(tool: "doctor"))")
            #expect(report.notChecked.isEmpty)
            let notOK = report.checks.filter { $0.severity != .ok && $0.name != .kernel }  // the kernel is this machine's
            #expect(notOK.isEmpty, "\(role): \(notOK)")
            #expect(report.check(.bluetoothd)?.detail == "running (org.bluez is on the bus); version 5.66 (\(machine.dir)/bluetoothd --version)")
            #expect(report.check(.adapter)?.detail == "hci0 (00:AA:01:00:00:00)")
            #expect(report.check(.advertising) == (role == .receiver ? .ok(.advertising, "5 of 5 advertising instances free") : nil))
        }
        await bluetoothd.connection.close()
    }

    @Test func anAdapterPoweredOffFailsWithBluetoothctlPowerOn() async throws {
        let machine = try DoctorMachine()
        defer { machine.remove() }
        let bus = try TestBus()
        defer { bus.stop() }
        let bluetoothd = try await FakeBluetoothd(address: bus.address)
        try await bluetoothd.setPowered(false)
        for role in [DoctorRole.sender, .receiver] {
            let report = await machine.report(bus: bus.address, role)
            #expect(report.check(.powered) == .fail(.powered, "hci0 is powered off", fix: "bluetoothctl power on"))
            #expect(report.checks.filter { $0.severity == .fail }.map(\.name) == [.powered])
            #expect(report.exitStatus == .bluetoothUnavailable)
            #expect(report.text(tool: "blesend").contains("fix: bluetoothctl power on"))
        }
        await bluetoothd.connection.close()
    }

    @Test func noOrgBluezOnTheBusIsBluetoothdNotRunning() async throws {
        let machine = try DoctorMachine()
        defer { machine.remove() }
        let bus = try TestBus()
        defer { bus.stop() }
        let report = await machine.report(bus: bus.address, .sender)
        let check = try #require(report.check(.bluetoothd))
        #expect(check.severity == .fail)
        #expect(check.detail.hasPrefix("bluetoothd is not running"))
        #expect(check.detail.contains("installed: 5.66"))
        #expect(check.fix == "sudo systemctl start bluetooth")
        #expect(report.notChecked == [.permission, .adapter, .powered, .le, .deviceName])
        #expect(report.exitStatus == .bluetoothUnavailable)

        // And a bluetoothd that leaves the bus is seen as gone.
        let bluetoothd = try await FakeBluetoothd(address: bus.address)
        #expect(await machine.report(bus: bus.address, .sender).ok)
        try await bluetoothd.releaseName()
        #expect(await machine.report(bus: bus.address, .receiver).check(.bluetoothd)?.severity == .fail)
        await bluetoothd.connection.close()
    }

    @Test func noAdapterFails() async throws {
        let machine = try DoctorMachine()
        defer { machine.remove() }
        let bus = try TestBus()
        defer { bus.stop() }
        let bluetoothd = try await FakeBluetoothd(address: bus.address)
        bluetoothd.removeAdapter()
        let report = await machine.report(bus: bus.address, .receiver)
        #expect(report.check(.adapter)?.severity == .fail)
        #expect(report.check(.adapter)?.detail == "bluetoothd knows no adapter")
        #expect(report.check(.adapter)?.fix == SetupFix.connectAdapter)
        #expect(report.notChecked == [.powered, .le, .peripheral, .advertising, .deviceName, .addressPrivacy])
        #expect(report.exitStatus == .bluetoothUnavailable)
        await bluetoothd.connection.close()
    }

    @Test func aBusThatKeepsUsFromBluetoothdFailsPermissionWithTheGroupFix() async throws {
        let machine = try DoctorMachine()
        defer { machine.remove() }
        let bus = try TestBus(extraRules: #"<deny send_destination="org.bluez"/>"#)
        defer { bus.stop() }
        let bluetoothd = try await FakeBluetoothd(address: bus.address)
        let report = await machine.report(bus: bus.address, .sender)
        #expect(report.check(.bluetoothd)?.severity == .ok)
        #expect(report.check(.permission)?.severity == .fail)
        #expect(report.check(.permission)?.fix
            == "run as root or add yourself to the bluetooth group: sudo usermod -aG bluetooth $USER, then log in again")
        #expect(report.exitStatus == .bluetoothUnavailable)
        await bluetoothd.connection.close()
    }

    @Test func anAdapterThatCannotAdvertiseFailsTheReceiverOnly() async throws {
        let machine = try DoctorMachine()
        defer { machine.remove() }
        let bus = try TestBus()
        defer { bus.stop() }
        let bluetoothd = try await FakeBluetoothd(address: bus.address, roles: ["central"], advertisingInstances: nil)
        #expect(await machine.report(bus: bus.address, .sender).exitStatus == .success)
        let receiver = await machine.report(bus: bus.address, .receiver)
        #expect(receiver.checks.filter { $0.severity == .fail }.map(\.name) == [.peripheral, .advertising])
        #expect(receiver.exitStatus == .bluetoothUnavailable)
        await bluetoothd.connection.close()
    }

    @Test func allAdvertisingInstancesInUseOnlyWarns() async throws {
        let machine = try DoctorMachine()
        defer { machine.remove() }
        let bus = try TestBus()
        defer { bus.stop() }
        let bluetoothd = try await FakeBluetoothd(address: bus.address, advertisingInstances: 1)
        bluetoothd.setActiveAdvertisingInstances(1)
        let receiver = await machine.report(bus: bus.address, .receiver)
        #expect(receiver.check(.advertising)?.severity == .warn)
        #expect(receiver.exitStatus == .success)
        await bluetoothd.connection.close()
    }

    @Test func aSoftBlockedSwitchAndAMainConfThatHurtAreRead() async throws {
        let machine = try DoctorMachine(mainConf: "[General]\nControllerMode = bredr\n[GATT]\nExchangeMTU = 48\n", rfkillSoftBlocked: true)
        defer { machine.remove() }
        let bus = try TestBus()
        defer { bus.stop() }
        let bluetoothd = try await FakeBluetoothd(address: bus.address)
        let report = await machine.report(bus: bus.address, .sender)
        #expect(report.check(.rfkill) == .fail(.rfkill, "soft-blocked: hci0", fix: "rfkill unblock bluetooth"))
        #expect(report.check(.controllerMode)?.severity == .fail)
        #expect(report.check(.exchangeMTU)?.severity == .warn)
        #expect(report.checks.filter { $0.severity == .fail }.map(\.name) == [.rfkill, .controllerMode])
        await bluetoothd.connection.close()
    }

    // MARK: The gatherer's other edges

    @Test func theVersionCommandIsBoundedInTimeAndMustSucceed() throws {
        let machine = try DoctorMachine(bluetoothdScript: "echo 5.82")
        defer { machine.remove() }
        let path = "\(machine.dir)/bluetoothd"
        #expect(DoctorFacts.installedBluetoothd([path], timeout: .seconds(10)) == InstalledBluetoothd(path: path, version: "5.82"))

        var script = ""
        for (body, what) in [("sleep 30", "too slow"), ("echo 5.66; exit 1", "failed"), ("echo usage: bluetoothd", "no version")] {
            script = "\(machine.dir)/\(what.replacingOccurrences(of: " ", with: "-"))"
            try DoctorMachine.writeScript(body, to: script)
            let started = ContinuousClock.now
            #expect(DoctorFacts.installedBluetoothd([script], timeout: .milliseconds(500)) == nil, "\(what)")
            #expect(ContinuousClock.now - started < .seconds(10), "\(what)")
        }
        #expect(DoctorFacts.installedBluetoothd(["\(machine.dir)/missing", script, path], timeout: .seconds(10))?.version == "5.82",
                "the first candidate that answers")
    }

    @Test func filesThatAreMissingOrUnreadable() throws {
        let machine = try DoctorMachine()
        defer { machine.remove() }
        #expect(DoctorFacts.mainConf("\(machine.dir)/none.conf") == .absent(path: "\(machine.dir)/none.conf"))
        guard case .unreadable = DoctorFacts.mainConf(machine.dir) else {
            Issue.record("a folder in place of main.conf is unreadable")
            return
        }
        #expect(DoctorFacts.rfkillSwitches("\(machine.dir)/none") == nil)
        #expect(DoctorFacts.rfkillSwitches("\(machine.dir)/rfkill") == [RfkillSwitch(name: "hci0", type: "bluetooth", softBlocked: false, hardBlocked: false)])
        #expect(DoctorFacts.kernelRelease()?.major != nil)
    }
}

#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Pipeline
import Testing
import TestSupport
@testable import BlesendCLI

/// `blerecv status`: the receiver's socket, and the command as built.
struct StatusCommandTests {
    private static func scratchFolder() -> String {
        let path = NSTemporaryDirectory() + "/blesend-status-\(getpid())-\(Int.random(in: 0..<1_000_000))"
        mkdir(path, 0o700)
        return path
    }

    private static func activityDuringATransfer() -> ReceiverActivity {
        var activity = ReceiverActivity(trusted: 2, maxLinks: 3)
        activity.opened(1, device: "/org/bluez/hci0/dev_00_AA_01_01_00_01", transport: "l2cap")
        activity.authenticated(1, peer: "alice", fingerprint: "4807 b78a d4e6 cc2f 1781 5a1c 6f36 720e")
        activity.fileStarted(1, name: "photo.jpg", size: 4_000_000, offset: 0, at: .zero)
        activity.progress(1, done: 1_000_000)
        activity.opened(2, device: "/org/bluez/hci0/dev_00_AA_01_02_00_01", transport: "gatt")
        activity.fileEnded(2, name: "notes.txt", peer: "bob", bytes: 1_200, saved: true)
        return activity
    }

    @Test func theSnapshotNamesEachLinkItsSenderFileRateAndETA() throws {
        let snapshot = StatusSnapshot(activity: Self.activityDuringATransfer(), adapter: "hci0", fingerprint: "ffff", advertising: true,
                                      outDirectory: "/var/lib/blesend/incoming", partialsKept: 1, now: Instant.zero.advanced(by: .seconds(10)))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(snapshot.json.text.utf8)) as? [String: Any])
        #expect(object["event"] as? String == "status")
        #expect(object["status"] as? String == "receiving photo.jpg from alice 25 %, 2 links")
        let links = try #require(object["links"] as? [[String: Any]])
        #expect(links.count == 2)
        #expect(links[0]["peer"] as? String == "alice" && links[0]["file"] as? String == "photo.jpg")
        #expect(links[0]["bytes"] as? Int == 1_000_000 && links[0]["total"] as? Int == 4_000_000)
        #expect(links[0]["rate"] as? Int == 100_000 || links[0]["rate"] as? Double == 100_000)
        #expect(links[0]["eta"] as? Int == 30)
        #expect(links[1]["peer"] is NSNull && links[1]["file"] is NSNull)
        #expect((object["recent"] as? [[String: Any]])?.first?["name"] as? String == "notes.txt")
        #expect(object["partials"] as? Int == 1)
        #expect(try JSONSchemaSubset.load().violations(of: object) == [], "the status event against docs/json-events.schema.json")
        let text = try #require(StatusText.render(json: snapshot.json.text))
        #expect(text.contains("link 1: alice over l2cap, photo.jpg") && text.contains("ETA") && text.contains("saved  notes.txt"), "\(text)")
    }

    @Test func theServerAnswersEachConnectionWithTheSnapshotAndGoesAwayWhenClosed() throws {
        let folder = Self.scratchFolder()
        defer { rmdir(folder) }
        let path = folder + "/status.sock"
        let server = try StatusServer(folder: folder, path: path) { #"{"event":"status","n":1}"# }
        #expect(StatusClient.read(path) == "{\"event\":\"status\",\"n\":1}\n")
        #expect(StatusClient.read(path) == "{\"event\":\"status\",\"n\":1}\n", "and again")
        var status = stat()
        #expect(stat(path, &status) == 0 && status.st_mode & 0o777 == 0o660)
        // A second receiver does not take the socket of one that answers.
        #expect(throws: StatusServer.Failure.inUse(path)) { try StatusServer(folder: folder, path: path) { "" } }
        server.close()
        #expect(StatusClient.read(path) == nil)
        #expect(access(path, F_OK) != 0, "the socket is gone")
    }

    @Test func aSocketLeftByAReceiverThatDiedIsReplaced() throws {
        let folder = Self.scratchFolder()
        defer { rmdir(folder) }
        let path = folder + "/status.sock"
        // A bound socket nobody listens on any more, as a killed receiver leaves it.
        let dead = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        _ = UnixSocketAddress.with(path) { bind(dead, $0, $1) }
        close(dead)
        #expect(access(path, F_OK) == 0)
        let server = try StatusServer(folder: folder, path: path) { "fresh" }
        #expect(StatusClient.read(path) == "fresh\n")
        server.close()
    }

    @Test func theCommandSaysClearlyWhenNoReceiverRuns() throws {
        let folder = Self.scratchFolder()
        defer { rmdir(folder) }
        let run = try CommandRun.run("blerecv", ["status", "--socket", folder + "/none.sock"])
        #expect(run.status == 68, "\(run.stderr)")
        #expect(run.stderr.contains("no receiver is running here"), "\(run.stderr)")
    }

    @Test func theCommandPrintsWhatTheReceiverSays() throws {
        let folder = Self.scratchFolder()
        defer { rmdir(folder) }
        let path = folder + "/status.sock"
        let line = StatusSnapshot(activity: Self.activityDuringATransfer(), adapter: "hci0", fingerprint: "ffff", advertising: true,
                                  outDirectory: nil, partialsKept: nil, now: Instant.zero.advanced(by: .seconds(10))).json.text
        let server = try StatusServer(folder: folder, path: path) { line }
        defer { server.close() }
        let json = try CommandRun.run("blerecv", ["status", "--socket", path, "--json"])
        #expect(json.status == 0 && json.stdout == line + "\n", "\(json.stderr)")
        let text = try CommandRun.run("blerecv", ["status", "--socket", path])
        #expect(text.status == 0 && text.stdout.hasPrefix("blerecv: receiving photo.jpg from alice 25 %, 2 links"), "\(text.stdout)")
    }

    @Test func theSocketIsWhereTheRuntimeDirectorySays() {
        let service = StatusSocketPath.serving { $0 == "RUNTIME_DIRECTORY" ? "/run/blesend" : nil }
        #expect(service?.path == "/run/blesend/status.sock")
        let user = StatusSocketPath.serving { $0 == "XDG_RUNTIME_DIR" ? "/run/user/1000" : nil }
        #expect(user?.folder == "/run/user/1000/blesend" && user?.path == "/run/user/1000/blesend/status.sock")
        #expect(StatusSocketPath.serving { _ in nil } == nil)
        #expect(StatusSocketPath.candidates { $0 == "XDG_RUNTIME_DIR" ? "/run/user/1000" : nil }
                == ["/run/user/1000/blesend/status.sock", "/run/blesend/status.sock"])
    }
}

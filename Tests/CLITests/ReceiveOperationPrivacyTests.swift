#if canImport(Glibc)
import Glibc
#endif
import BlueZ
import Keys
import Logging
import Synchronization
import TestDoubles
import Testing
@testable import BlesendCLI

/// `blerecv --private-discovery` asks about the adapter's address privacy before it registers
/// anything with bluetoothd, and stops there when the address is fixed.
@Suite("receive operation: private discovery and address privacy")
struct ReceiveOperationPrivacyTests {
    final class Asked: Sendable {
        let names = Mutex<[String?]>([])
    }

    func operation(privacy: AddressPrivacy, asked: Asked) throws -> ReceiveOperation {
        var template = Array("/tmp/blesend-trust-XXXXXX".utf8CString)
        let trust = String(cString: try #require(mkdtemp(&template)))
        try TrustStore.add(Identity.generate().publicKey, name: "s", directory: trust)
        var operation = ReceiveOperation(
            identity: Identity.generate(), trust: LiveTrust(try TrustDirectory(path: trust)),
            store: MemoryFileStore(), outDirectory: nil, adapter: "hci3", l2cap: false, once: true, privateDiscovery: true,
            allowPublicAddress: false,
            reporter: Reporter(options: .init(quiet: true, tool: "blerecv"), logger: Logger(label: "test"), writeError: { _ in }))
        operation.readAddressPrivacy = { (name: String?) async throws(BlueZError) in
            asked.names.withLock { $0.append(name) }
            return (name ?? "hci0", privacy)
        }
        return operation
    }

    @Test(arguments: [AddressPrivacy.off, .unknown(.managementInterface(.unavailable(errno: EAFNOSUPPORT)))])
    func aFixedOrUnknownAddressStopsItBeforeAnythingIsAdvertised(_ privacy: AddressPrivacy) async throws {
        let asked = Asked()
        let receiving = try operation(privacy: privacy, asked: asked)
        do throws(CLIError) {
            try await receiving.run()
            Issue.record("it ran")
        } catch {
            // 78, not 67: it never reached bluetoothd (there is none here) to register the advertisement.
            #expect(error.status == .addressNotPrivate)
            #expect(error.message.contains("hci3"))
        }
        #expect(asked.names.withLock { $0 } == ["hci3"])
    }
}

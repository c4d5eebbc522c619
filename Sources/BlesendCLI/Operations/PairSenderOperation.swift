import BlueZ
import Discovery
import Durable
import Keys
import Pairing
import Session
import SessionRunner
import Transfer

/// `blesend pair`: finds a receiver that is pairing (its advertisement says so), runs the pairing
/// with the code the user typed, and pins the receiver in the address book once the receiver has
/// said it trusts us (P4). Nothing is written before that.
struct PairSenderOperation {
    let identity: Identity
    let code: PairingPasscode
    /// The name this machine suggests to the receiver.
    let ownName: String
    /// The name to keep the receiver under (nil: the one it suggests).
    let peerName: String?
    let addressBook: NamedKeyDirectory
    let radio: RadioOptions
    let connector: any PeerConnector
    /// The failed attempts so far (the pause before the next, docs/protocol.md §9.5); nil: not kept.
    var failures: PairingFailures?
    let reporter: Reporter

    /// Whether service data is a pairing receiver's (`PairingAdvertisement`).
    static let recognisesPairing: @Sendable ([UInt8]) -> Bool? = { PairingAdvertisement.parse($0) != nil }

    func run() async throws(CLIError) {
        let wait = PairingFailures.wait(after: failures?.times ?? [], now: Self.seconds(), pause: PairingPause.after)
        if wait > 0 {
            reporter.event(JSONLine("pairing-pause", [("seconds", .int(Int64(wait)))]))
            reporter.say("blesend: the last pairing attempt failed; the next may start in \(wait) s (Ctrl-C to stop)")
            try? await Task.sleep(for: .seconds(wait))
        }
        reporter.event(JSONLine("scanning", [("adapter", .of(radio.adapter)), ("min_rssi", radio.minimumRSSI.map { .int(Int64($0)) } ?? .null)]))
        reporter.logger.info("looking for a receiver running blerecv pair (timeout \(CLIError.seconds(radio.scanTimeout)) s)")
        let link: PeerConnection
        do {
            link = try await connector.connect(scanTime: radio.scanTimeout, excluding: [], known: []) { [reporter] step in
                if case .found(let device) = step { reporter.event(JSONLine("found", [("device", .string(device))])) }
            }
        } catch .notFound {
            throw CLIError(.peerNotFound, "no receiver running blerecv pair found within \(CLIError.seconds(radio.scanTimeout)) s",
                           hint: "run `blerecv pair` on the receiving machine, keep the two close, then blesend pair again")
        } catch {
            throw CLIError(error, adapter: radio.adapter)
        }
        let cleanup = Interrupts.shared.add { await link.close() }
        defer { Interrupts.shared.remove(cleanup) }
        reporter.connected(device: link.device, transport: link.transportDescription, l2capFallback: nil)
        guard TransferExtensions(rawValue: link.receiverExtensions).contains(.pairing) else {
            await link.close()
            throw CLIError(.pairing(.refused))
        }
        let session: PairingSenderSession
        do {
            session = try await EndpointRunner.runPairingSender(over: link.transport, make: { size, peer, now throws(SessionError) in
                try PairingSenderSession(identity: identity, name: ownName, code: code, maxDatagramSize: size,
                                         peerMaxDatagramSize: peer, now: now)
            }) { _ in }
        } catch {
            await link.close()
            // A wrong code is the attempt a device in the middle makes: the next waits (§9.5).
            if error == .pairing(.wrongCode) { try? failures?.failed(at: Self.seconds()) }
            throw CLIError(error)
        }
        await link.close()
        guard let receiver = session.receiver else {
            throw CLIError(.notPaired, "the link ended before the receiver confirmed the pairing; nothing was pinned here",
                           hint: "run blerecv pair and blesend pair again (a receiver that kept your key says so)")
        }
        let pinned: PinnedKeys.Pinned
        do {
            pinned = try PinnedKeys.pin(receiver.publicKey, chosen: peerName, suggested: receiver.name, in: addressBook)
        } catch {
            throw CLIError(error)
        }
        try? failures?.succeeded()
        reporter.event(JSONLine("paired", [("peer", .string(pinned.name)), ("fingerprint", .string(receiver.publicKey.fingerprint)),
                                           ("path", .string(pinned.path))]))
        let was = pinned.existed ? " (it was pinned already)" : ""
        reporter.say("blesend: paired with \(pinned.name) [\(receiver.publicKey.fingerprint)]: pinned in \(pinned.path)\(was)")
        reporter.say("blesend: now send with: blesend --to \(pinned.name) FILE")
    }

    /// Seconds since 1970, for the pause between attempts.
    static func seconds() -> UInt64 { EndpointRunner.wallClock() / 1_000_000_000 }
}

import EventSchema
import Foundation
import DBus
import BlueZ
import L2CAP
import Session
import Testing
@testable import BlesendCLI

/// The sender's reconnection rules (`ReconnectPolicy`), outcome by outcome, on a clock we move by hand.
@Suite("Reconnect policy")
struct ReconnectPolicyTests {
    let t0 = ContinuousClock.now
    func at(_ seconds: Double) -> ContinuousClock.Instant { t0 + .milliseconds(Int(seconds * 1000)) }
    func policy() -> ReconnectPolicy { ReconnectPolicy(scanTimeout: .seconds(30), adapter: "hci1") }

    func scan(_ decision: ReconnectPolicy.Decision) -> (Duration, Duration)? {
        if case .connect(let scanTime, let after) = decision { return (scanTime, after) }
        return nil
    }
    func failure(_ decision: ReconnectPolicy.Decision) -> CLIError? {
        if case .fail(let error) = decision { return error }
        return nil
    }

    @Test func firstScanUsesTheWholeTimeout() {
        #expect(scan(policy().start)?.0 == .seconds(30))
    }

    @Test func aSilentReceiverAmongOthersIsSkippedAndReportedIfNoneAnswers() throws {
        var p = policy()
        p.connected(to: "/dev_A", others: ["/dev_B"])
        // The receiver never answered message 2 before any data moved: skip it while another is there.
        let next = p.sessionFailed(.handshakeTimeout, device: "/dev_A", progressed: false, anyProgress: false, now: at(3))
        #expect(scan(next)?.0 == .seconds(5))
        #expect(p.excluded == ["/dev_A"])
        // Nobody else answered the scan: the refusal is what the user learns (exit 66), not "not found".
        let end = try #require(failure(p.connectFailed(.notFound, now: at(9))))
        #expect(end.status == .peerRefused)
        #expect(end.message.contains("did not answer the handshake"))
    }

    @Test func aRefusalReportsTheRefusal() throws {
        var p = policy()
        _ = p.sessionFailed(.refusedByPeer, device: "/dev_A", progressed: false, anyProgress: false, now: at(1))
        #expect(try #require(failure(p.connectFailed(.notFound, now: at(7)))).status == .peerRefused)
    }

    /// Issue 20: two receivers advertise the ordinary way; the one tried first is not the pinned
    /// one. The other, seen in the same scan, is tried next at once; once every receiver seen has
    /// refused, the refusal is reported without a further scan.
    @Test func aRefusalTriesTheOtherReceiverSeenThenReportsAtOnce() throws {
        var p = policy()
        p.connected(to: "/dev_A", others: ["/dev_B"])
        #expect(p.untried == ["/dev_B"])
        let next = p.sessionFailed(.refusedByPeer, device: "/dev_A", progressed: false, anyProgress: false, now: at(2))
        #expect(scan(next)?.0 == .seconds(5))
        #expect(p.excluded == ["/dev_A"])
        p.connected(to: "/dev_B", others: ["/dev_A"])
        #expect(p.untried.isEmpty)   // A refused already: not untried again
        // B refuses too: nothing seen is left, and the look after the first refusal is spent.
        let end = try #require(failure(p.sessionFailed(.refusedByPeer, device: "/dev_B", progressed: false, anyProgress: false, now: at(5))))
        #expect(end.status == .peerRefused)
        #expect(p.excluded == ["/dev_A", "/dev_B"])
    }

    /// The pinned receiver itself refuses (the sender is not trusted) and nothing else was seen:
    /// one short look for a receiver not seen yet, then the refusal (exit 66), in seconds.
    @Test func theOnlyReceiverRefusingGetsOneShortLook() throws {
        var p = policy()
        p.connected(to: "/dev_A", others: [])
        let next = p.sessionFailed(.refusedByPeer, device: "/dev_A", progressed: false, anyProgress: false, now: at(2))
        #expect(scan(next)?.0 == ReconnectPolicy.lookAfterRefusal)
        #expect(ReconnectPolicy.lookAfterRefusal <= .seconds(2))
        #expect(try #require(failure(p.connectFailed(.notFound, now: at(3.5)))).status == .peerRefused)
    }

    /// The receiver proved its key and said it does not trust us (`notTrusted`, §8.7): the pinned
    /// receiver itself refused, so no other device is tried and nothing is looked for.
    @Test func aReceiverThatProvesItsKeyAndRefusesEndsTheSendAtOnce() throws {
        var p = policy()
        p.connected(to: "/dev_A", others: ["/dev_B"])
        let end = try #require(failure(p.sessionFailed(.notTrustedByPeer, device: "/dev_A", progressed: false, anyProgress: false, now: at(2))))
        #expect(end.status == .peerRefused)
        #expect(end.message.contains("does not trust your key"))
    }

    /// A receiver found in that short look refuses too: reported at once, no second look.
    @Test func aReceiverFoundInTheLookThatRefusesEndsIt() throws {
        var p = policy()
        _ = p.sessionFailed(.refusedByPeer, device: "/dev_A", progressed: false, anyProgress: false, now: at(2))
        p.connected(to: "/dev_C", others: [])
        #expect(failure(p.sessionFailed(.refusedByPeer, device: "/dev_C", progressed: false, anyProgress: false, now: at(5))) != nil)
    }

    /// Issue 20: a receiver busy with another sender keeps the next one's channel waiting, so that
    /// sender sees no message 2. With no other receiver to try it is tried again every 2 s (plus
    /// jitter) until the timeout, then the send ends as busy (75), not as a refusal (66).
    @Test func aSilentReceiverIsTriedAgainUntilTheTimeoutThenReadsAsBusy() throws {
        var p = ReconnectPolicy(scanTimeout: .seconds(30), adapter: "hci1", jitter: { .milliseconds(250) })
        p.connected(to: "/dev_A", others: [])
        let first = p.sessionFailed(.handshakeTimeout, device: "/dev_A", progressed: false, anyProgress: false, now: at(12))
        #expect(scan(first)?.1 == .milliseconds(2250))
        #expect(p.waitingForBusyReceiver)
        #expect(p.excluded.isEmpty)   // the same receiver is tried again
        let second = p.sessionFailed(.handshakeTimeout, device: "/dev_A", progressed: false, anyProgress: false, now: at(26))
        #expect(scan(second) != nil)
        let end = try #require(failure(p.sessionFailed(.handshakeTimeout, device: "/dev_A", progressed: false, anyProgress: false, now: at(41))))
        #expect(end.status == .receiverBusy)
        #expect(end.message.contains("busy with another sender"))
        #expect(!p.waitingForBusyReceiver)
    }

    /// A receiver that proved its key and said `busy`: come back when it said (plus jitter), even
    /// with another receiver nearby, until the timeout counted from the first `busy`.
    @Test func aReceiverThatSaysBusyIsTriedAgainWhenItSaidUntilTheTimeout() throws {
        var p = ReconnectPolicy(scanTimeout: .seconds(30), adapter: "hci1", jitter: { .milliseconds(400) })
        p.connected(to: "/dev_A", others: ["/dev_B"])
        let first = p.sessionFailed(.receiverBusy(retryAfter: .seconds(5), ahead: 2), device: "/dev_A", progressed: false,
                                    anyProgress: false, now: at(2))
        #expect(scan(first)?.1 == .milliseconds(5400))
        #expect(p.waitingForBusyReceiver && p.sendersAhead == 2)
        #expect(p.excluded.isEmpty)   // the pinned receiver itself said so: nothing to skip
        // A moment of nothing asked: at least the shortest scan.
        let soon = p.sessionFailed(.receiverBusy(retryAfter: .zero, ahead: 0), device: "/dev_A", progressed: false,
                                   anyProgress: false, now: at(8))
        #expect(scan(soon)?.1 == .milliseconds(1400))
        #expect(p.sendersAhead == 0)
        let end = try #require(failure(p.sessionFailed(.receiverBusy(retryAfter: .seconds(5), ahead: 1), device: "/dev_A",
                                                       progressed: false, anyProgress: false, now: at(27))))
        #expect(end.status == .receiverBusy)
        #expect(end.message.contains("stayed busy with other senders for 30 s"))
        #expect(!p.waitingForBusyReceiver && p.sendersAhead == nil)
    }

    /// The `busy` event matches docs/json-events.schema.json, told or silent.
    @Test func busyEventsMatchTheDocumentedSchema() throws {
        let schema = try JSONSchemaSubset.load()
        for line in [JSONLine.busy(device: "/org/bluez/hci1/dev_A", retryIn: .milliseconds(5430), ahead: 2),
                     .busy(device: nil, retryIn: .seconds(2), ahead: nil)] {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.text.utf8)) as? [String: Any])
            #expect(schema.violations(of: object).isEmpty, "\(line.text): \(schema.violations(of: object))")
            #expect(object.keys.contains("ahead"))
        }
    }

    /// A silent receiver while another, seen nearby, is untried: that one is tried first (it may be
    /// the pinned one; the silent one may be an impostor).
    @Test func aSilentReceiverWithAnotherNearbyTriesTheOther() {
        var p = policy()
        p.connected(to: "/dev_A", others: ["/dev_B"])
        let next = p.sessionFailed(.handshakeTimeout, device: "/dev_A", progressed: false, anyProgress: false, now: at(11))
        #expect(scan(next)?.0 == .seconds(5))
        #expect(!p.waitingForBusyReceiver)
        #expect(p.excluded == ["/dev_A"])
    }

    @Test func cutMidFileReconnectsWithinWhatIsLeftOfTheTimeout() {
        var p = policy()
        let next = p.linkLost(progressed: true, now: at(10))
        #expect(scan(next)?.0 == .seconds(30))
        #expect(p.reconnecting)
        // 25 s after the loss only 5 s of the budget are left; never less than 1 s.
        #expect(p.scanTime(now: at(35)) == .seconds(5))
        #expect(p.scanTime(now: at(60)) == .seconds(1))
        // A handshake timeout after data moved is a lost link, not a refusal: the device stays.
        let again = p.sessionFailed(.handshakeTimeout, device: "/dev_A", progressed: false, anyProgress: true, now: at(12))
        #expect(scan(again) != nil)
        #expect(p.excluded.isEmpty)
    }

    @Test func receiverGoneAfterALostLinkEndsWithLinkLost() throws {
        var p = policy()
        _ = p.linkLost(progressed: true, now: at(10))
        let end = try #require(failure(p.connectFailed(.notFound, now: at(40))))
        #expect(end.status == .linkLost)
        #expect(end.message.contains("could not be found again"))
    }

    @Test func adapterOffWhileReconnectingIsRetriedEverySecondWithinTheBudget() throws {
        var p = policy()
        _ = p.linkLost(progressed: true, now: at(10))
        let retry = p.connectFailed(.adapterPoweredOff("/org/bluez/hci1"), now: at(12))
        #expect(scan(retry)?.1 == .seconds(1))
        // Past the budget the adapter's state is what the user learns (exit 67).
        let end = try #require(failure(p.connectFailed(.adapterPoweredOff("/org/bluez/hci1"), now: at(41))))
        #expect(end.status == .bluetoothUnavailable)
    }

    @Test func adapterOffOnFirstContactFailsAtOnce() throws {
        var p = policy()
        #expect(try #require(failure(p.connectFailed(.adapterPoweredOff("/org/bluez/hci1"), now: at(0)))).status == .bluetoothUnavailable)
    }

    /// A link that drops before the transport opened (seen in the lab: a receiver ended a second
    /// sender's link whose discovery was slow) is connected again, with the fruitless-reconnect
    /// bound; the scan may take what is left of the timeout from the loss.
    @Test func aLinkLostWhileConnectingIsConnectedAgain() throws {
        var p = policy()
        let retry = p.connectFailed(.linkLost, now: at(12))
        #expect(scan(retry)?.0 == .seconds(30))
        #expect(p.reconnecting)
        #expect(p.scanTime(now: at(32)) == .seconds(10))
        for i in 2...ReconnectPolicy.maxFruitlessReconnects { #expect(scan(p.connectFailed(.linkLost, now: at(12 + Double(i)))) != nil) }
        let end = try #require(failure(p.connectFailed(.linkLost, now: at(20))))
        #expect(end.status == .linkLost)
        #expect(end.message.contains("before the transfer could start"))
    }

    @Test func reconnectionsWithoutProgressGiveUp() throws {
        var p = policy()
        for i in 1...ReconnectPolicy.maxFruitlessReconnects {
            #expect(scan(p.linkLost(progressed: false, now: at(Double(i)))) != nil)
        }
        let end = try #require(failure(p.linkLost(progressed: false, now: at(9))))
        #expect(end.status == .linkLost)
        // Progress resets the count.
        var q = policy()
        for i in 1...10 { #expect(scan(q.linkLost(progressed: i % 2 == 0, now: at(Double(i)))) != nil) }
    }

    @Test func unrecoverableSessionErrorsEndAtOnce() throws {
        var p = policy()
        let end = try #require(failure(p.sessionFailed(.transfer(.ackBeyondSent), device: "/dev_A", progressed: true, anyProgress: true, now: at(1))))
        #expect(end.status == .protocolViolation)
    }

    /// Each transport: `--transport l2cap` to a receiver without a channel, or a channel that does not
    /// open on first contact, ends at once (exit 73); after a lost link a channel that does not open
    /// is tried again like any other failure; a busy characteristic (GATT) ends at once.
    @Test func transportFailures() throws {
        var p = policy()
        #expect(try #require(failure(p.connectFailed(.l2capNotOffered, now: at(0)))).status == .transportUnavailable)
        #expect(try #require(failure(p.connectFailed(.l2cap(.timedOut), now: at(0)))).status == .transportUnavailable)
        #expect(try #require(failure(p.connectFailed(.characteristicBusy(DBusRemoteError(name: "org.bluez.Error.NotPermitted", message: "Write acquired")), now: at(0)))).status == .bluetoothUnavailable)
        _ = p.linkLost(progressed: true, now: at(5))
        #expect(scan(p.connectFailed(.l2cap(.connectFailed(errno: 111)), now: at(6))) != nil)
        #expect(try #require(failure(p.connectFailed(.l2capNotOffered, now: at(7)))).status == .transportUnavailable)
    }

    /// The bus refusing this user is not something a reconnect changes, even mid-transfer.
    @Test func accessDeniedEndsAtOnceEvenWhileReconnecting() throws {
        var p = policy()
        _ = p.linkLost(progressed: true, now: at(5))
        #expect(try #require(failure(p.connectFailed(.accessDenied(DBusRemoteError(name: "org.freedesktop.DBus.Error.AccessDenied", message: "Rejected send message")), now: at(6)))).status == .bluetoothUnavailable)
    }
}

import Pipeline
import Testing

/// The ending rules every real-time pump follows, on a clock played by hand.
@Suite("Connection driver rules")
struct ConnectionDriverTests {
    let start = Instant(nanoseconds: 5_000_000_000)

    @Test func aSettledConnectionEndsAtOnceUnlessDatagramsWaitForTheTransport() {
        var rules = ConnectionDriver(maxDatagramSize: 100, peerMaxDatagramSize: 100)
        #expect(rules.endingAfterSending(.running, now: start) == nil)
        #expect(rules.endingAfterSending(.done, now: start) == nil)
        #expect(rules.endingAfterSending(.settled, backlog: true, now: start) == nil)
        #expect(rules.isLingering)
        #expect(rules.endingAfterSending(.settled, now: start) == .finished)
    }

    @Test func aCompleteConnectionLingersThreeHundredMillisecondsAtMost() {
        var rules = ConnectionDriver(maxDatagramSize: 100, peerMaxDatagramSize: 100)
        #expect(rules.endingAfterSending(.complete, now: start) == nil)
        #expect(rules.endingAfterSending(.complete, now: start.advanced(by: .milliseconds(300))) == nil)
        #expect(rules.endingAfterSending(.complete, now: start.advanced(by: .milliseconds(301))) == .finished)
    }

    @Test func waitsFollowTheDeadlineAndShortenWhileLingering() {
        var rules = ConnectionDriver(maxDatagramSize: 100, peerMaxDatagramSize: 100)
        #expect(rules.wait(deadline: nil, now: start) == ConnectionDriver.idleWait)
        #expect(rules.wait(deadline: start.advanced(by: .milliseconds(70)), now: start) == .milliseconds(70))
        #expect(rules.wait(deadline: start, now: start) == ConnectionDriver.shortestWait, "a deadline due now is a turn, not a spin")
        _ = rules.endingAfterSending(.complete, now: start)
        #expect(rules.wait(deadline: nil, now: start) == ConnectionDriver.lingerWait)
    }

    @Test func aClosedLinkFinishesOnlyWorkThatIsDone() {
        #expect(ConnectionDriver.endingOnClose(.running) == .linkLost)
        #expect(ConnectionDriver.endingOnClose(.done) == .finished)
        #expect(ConnectionDriver.endingOnClose(.complete) == .finished)
        #expect(ConnectionDriver.endingOnClose(.settled) == .finished)
    }

    @Test func aSizeChangeReachesTheEndpointOnceAndBoundsWhatFits() {
        struct Sized: DatagramEndpoint {
            var resized: [(Int, Int)] = []
            mutating func nextDatagram(now: Instant) -> [UInt8]? { nil }
            mutating func receive(datagram: [UInt8], now: Instant) {}
            mutating func handleTimers(now: Instant) {}
            var nextDeadline: Instant? { nil }
            mutating func linkResized(maxDatagramSize: Int, peerMaxDatagramSize: Int) {
                resized.append((maxDatagramSize, peerMaxDatagramSize))
            }
        }
        var endpoint = Sized()
        var rules = ConnectionDriver(maxDatagramSize: 20, peerMaxDatagramSize: 18)
        rules.follow(maxDatagramSize: 20, peerMaxDatagramSize: 18, &endpoint)
        #expect(endpoint.resized.isEmpty)
        rules.follow(maxDatagramSize: 244, peerMaxDatagramSize: 242, &endpoint)
        rules.follow(maxDatagramSize: 244, peerMaxDatagramSize: 242, &endpoint)
        #expect(endpoint.resized.count == 1 && endpoint.resized[0] == (244, 242))
        #expect(rules.fits([UInt8](repeating: 0, count: 244)))
        #expect(!rules.fits([UInt8](repeating: 0, count: 245)))
    }
}

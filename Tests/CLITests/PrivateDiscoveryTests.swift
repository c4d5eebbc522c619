import Discovery
import Keys
import Sodium
import Testing
@testable import BlesendCLI

/// The sender's recogniser against what a receiver advertises: its own receiver's data lists it,
/// another receiver's does not, and data it cannot read is left to the UUID rules (nil).
@Test func theSendersRecogniserMatchesOnlyItsPinnedReceiverListingIt() throws {
    // Fixed keys too: with random ones, two tags could collide once in 2^16 runs.
    func identity(_ byte: UInt8) throws -> Identity { try Identity(secretKey: SecureBytes(copying: Array(repeating: byte, count: 32))) }
    let sender = try identity(1), receiver = try identity(2), other = try identity(3), stranger = try identity(4)
    let recognise = try #require(Send.recogniser(identity: sender, receiver: receiver.publicKey))
    // Fixed salt and filler: no 1-in-20,000 chance match from random filler can flake the test.
    let salt = try #require(DiscoverySalt(bytes: [1, 2, 3]))
    let filler: DiscoveryRandom = { Array(repeating: 0x5A, count: $0) }
    let listed = DiscoveryAdvertisement.make(salt: salt, keys: [try DiscoveryKey.forReceiver(identity: receiver, sender: sender.publicKey)], random: filler)
    let notListed = DiscoveryAdvertisement.make(salt: salt, keys: [try DiscoveryKey.forReceiver(identity: receiver, sender: stranger.publicKey)], random: filler)
    // Another receiver that trusts this sender: its data is keyed to that receiver, not the pinned one.
    let otherReceiver = DiscoveryAdvertisement.make(salt: salt, keys: [try DiscoveryKey.forReceiver(identity: other, sender: sender.publicKey)], random: filler)
    #expect(recognise(listed) == true)
    #expect(recognise(notListed) == false)
    #expect(recognise(otherReceiver) == false)
    #expect(recognise([0x7F] + Array(repeating: 0, count: 9)) == nil)
    #expect(recognise([0x01, 2, 3]) == nil)
}

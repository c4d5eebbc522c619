import L2CAP
import Testing
@testable import BlueZ

/// Which links the receiver may end when they open no transfer channel (issue 31, item 1): only an
/// incoming LE link of an unpaired device, or one it cannot tell apart from that. A keyboard
/// (BR/EDR), the adapter's own outgoing link, and a paired or bonded device stay up.
@Suite("Link standing")
struct LinkStandingTests {
    static let address: [UInt8] = [0x00, 0xAA, 0x01, 0x01, 0x00, 0x01]
    static let leIn = AdapterLink(address: address, bearer: .lowEnergy, outgoing: false)
    static let leOut = AdapterLink(address: address, bearer: .lowEnergy, outgoing: true)
    static let classicIn = AdapterLink(address: address, bearer: .classic, outgoing: false)
    static let classicOut = AdapterLink(address: address, bearer: .classic, outgoing: true)
    static let sco = AdapterLink(address: address, bearer: .other(0x00), outgoing: false)

    @Test(arguments: [
        ([leIn], false, LinkStanding.candidate),
        ([], false, .candidate),                           // not in the kernel's list, or unreadable: unknown
        ([leIn], true, .spared(.paired)),
        ([], true, .spared(.paired)),
        ([leOut], false, .spared(.outgoing)),
        ([leOut], true, .spared(.outgoing)),
        ([classicIn], false, .spared(.notLowEnergy)),      // a keyboard reconnecting after sleep
        ([classicOut], false, .spared(.notLowEnergy)),
        ([classicIn, sco], false, .spared(.notLowEnergy)), // a headset
        ([classicIn, leIn], false, .candidate),            // a dual-mode device's LE link is still a sender's
        ([leOut, leIn], false, .candidate),
        ([classicIn, leOut], false, .spared(.outgoing)),
    ] as [([AdapterLink], Bool, LinkStanding)])
    func standing(kernel: [AdapterLink], paired: Bool, expected: LinkStanding) {
        #expect(LinkStanding(kernel: kernel, paired: paired) == expected)
    }
}

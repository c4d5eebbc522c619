import Framing
import Testing

@Suite struct SequenceNumberTests {
    @Test(arguments: [
        (0, 0), (8191, 8191), (8192, 0), (8193, 1), (-1, 8191), (-8192, 0), (3 * 8192 + 5, 5),
    ])
    func reduction(input: Int, expected: Int) {
        #expect(SequenceNumber(input).value == UInt16(expected))
    }

    @Test(arguments: [
        (0, 1, 1), (8191, 1, 0), (8190, 5, 3), (5, -6, 8191), (100, 8192, 100), (0, -8193, 8191),
    ])
    func advancing(start: Int, by: Int, expected: Int) {
        #expect(SequenceNumber(start).advanced(by: by) == SequenceNumber(expected))
    }

    @Test(arguments: [
        (0, 0, 0), (0, 5, 5), (5, 0, 8187), (8190, 2, 4), (2, 8190, 8188), (8191, 0, 1),
    ])
    func forwardDistance(from: Int, to: Int, expected: Int) {
        #expect(SequenceNumber(from).distance(to: SequenceNumber(to)) == expected)
    }

    @Test func windowMembershipAcrossWrap() {
        let start = SequenceNumber(8150)
        #expect(SequenceNumber(8150).isWithin(128, from: start))
        #expect(SequenceNumber(8191).isWithin(128, from: start))
        #expect(SequenceNumber(0).isWithin(128, from: start))
        #expect(SequenceNumber(85).isWithin(128, from: start))
        #expect(!SequenceNumber(86).isWithin(128, from: start))
        #expect(!SequenceNumber(8149).isWithin(128, from: start))
    }

    @Test func distanceAndAdvanceAreInverse() {
        for a in stride(from: 0, to: 8192, by: 97) {
            for d in stride(from: 0, to: 8192, by: 101) {
                let s = SequenceNumber(a)
                #expect(s.distance(to: s.advanced(by: d)) == d)
            }
        }
    }
}

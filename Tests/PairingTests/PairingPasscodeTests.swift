import Pairing
import Testing

@Suite struct PairingPasscodeTests {
    static let accepted: [(typed: String, value: UInt32)] = [
        ("1234 5678", 12_345_678),
        ("12345678", 12_345_678),
        ("1234-5678", 12_345_678),
        ("  1234 5678  ", 12_345_678),
        ("1 2 3 4 5 6 7 8", 12_345_678),
        ("12-34-56-78", 12_345_678),
        ("0000 0000", 0),
        ("0012 3456", 123_456),
        ("9999 9999", 99_999_999),
        ("--12345678--", 12_345_678),
    ]

    static let refused: [String] = [
        "", " ", "-", "1234 567", "1234567", "1234 56789", "123456789",
        "1234_5678", "1234.5678", "1234\t5678", "1234\n5678", "12345678\n",
        "abcd efgh", "1234 567a", "+1234567", "١٢٣٤٥٦٧٨",   // Arabic-Indic digits are not ASCII
        "１２３４５６７８",                                     // fullwidth digits neither
        "1234 5678 9", "-1234567",
    ]

    @Test(arguments: accepted)
    func accepts(typed: String, value: UInt32) throws {
        let code = try #require(PairingPasscode(typed: typed))
        #expect(code.value == value)
    }

    @Test(arguments: refused)
    func refuses(typed: String) {
        #expect(PairingPasscode(typed: typed) == nil)
    }

    @Test func displayAndPRS() throws {
        let code = try #require(PairingPasscode(value: 123_456))
        #expect(code.display == "0012 3456")
        #expect(code.prs == Array("00123456".utf8))
        #expect(PairingPasscode(typed: code.display) == code)
        #expect(try #require(PairingPasscode(value: 99_999_999)).display == "9999 9999")
        #expect(!code.description.contains("3456"))
    }

    @Test func valuesAboveTheRangeAreRefused() {
        #expect(PairingPasscode(value: 100_000_000) == nil)
        #expect(PairingPasscode(value: .max) == nil)
    }

    @Test func randomCodesAreInRangeAndVary() {
        let codes = (0..<200).map { _ in PairingPasscode.random() }
        #expect(codes.allSatisfy { $0.value < PairingPasscode.upperBound && $0.display.count == 9 })
        #expect(Set(codes).count > 190)
    }
}

/// The pause after failed attempts (docs/protocol.md §9.5): 5 s, doubling, at most 5 minutes.
@Test(arguments: [(0, 0), (1, 5), (2, 10), (3, 20), (6, 160), (7, 300), (8, 300), (1_000, 300)])
func thePauseDoublesFromFiveSecondsToFiveMinutes(failures: Int, seconds: Int64) {
    #expect(PairingPause.after(failures: failures) == .seconds(seconds))
}

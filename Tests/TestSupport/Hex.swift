/// Hex decoding for test vectors. Returns nil on malformed input so tests fail instead of trapping.
public func bytes(hex: String) -> [UInt8]? {
    let digits = Array(hex.filter { !$0.isWhitespace }.utf8)
    guard digits.count % 2 == 0 else { return nil }
    var result: [UInt8] = []
    result.reserveCapacity(digits.count / 2)
    var index = 0
    while index < digits.count {
        guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
        result.append(high << 4 | low)
        index += 2
    }
    return result
}

private func nibble(_ digit: UInt8) -> UInt8? {
    switch digit {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
    default: nil
    }
}

public func hex(_ bytes: some Collection<UInt8>) -> String {
    bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
}

import Framing
import Pipeline

/// `frame`: one datagram into `FrameCodec.decode`, the first parser a peer's bytes reach.
///
/// Invariants:
/// - a decoded frame encodes back to exactly the datagram (the format has one encoding per frame);
/// - decoding the same bytes from a slice that does not start at index 0 gives the same result;
/// - decoded fields are in range: 13-bit sequence, start length 1...65535, non-empty fragment,
///   ack bitmap at most `FrameLayout.maxSelectiveAckBytes`.
let frameTarget = FuzzTarget(
    name: "frame",
    summary: "one datagram into FrameCodec.decode; round trip through encode",
    run: runFrame,
    seeds: frameSeeds)

private func runFrame(_ datagram: [UInt8]) {
    let decoded = Result { () throws(FramingError) in try FrameCodec.decode(datagram) }

    // The same bytes at a non-zero slice offset (the link decodes slices of larger buffers).
    let shifted = ([0xA5] + datagram)[1...]
    let decodedShifted = Result { () throws(FramingError) in try FrameCodec.decode(shifted) }
    require(decoded == decodedShifted, "slice offset changed the result: \(decoded) vs \(decodedShifted)")

    guard case .success(let frame) = decoded else { return }
    switch frame {
    case let .data(sequence, fragment):
        require(Int(sequence.value) < SequenceNumber.modulus, "sequence \(sequence.value) out of range")
        require(!fragment.bytes.isEmpty, "data frame with an empty fragment")
        if let length = fragment.messageLength { require(length > 0, "start frame announcing length 0") }
        require(fragment.encodedSize == datagram.count, "encodedSize \(fragment.encodedSize) for \(datagram.count) bytes")
    case let .ack(cumulative, bitmap):
        require(Int(cumulative.value) < SequenceNumber.modulus, "cumulative \(cumulative.value) out of range")
        require(bitmap.count <= FrameLayout.maxSelectiveAckBytes, "bitmap of \(bitmap.count) bytes")
    }
    let encoded = FrameCodec.encode(frame)
    require(encoded == datagram, "decode/encode round trip changed the datagram")
}

private func frameSeeds() -> [FuzzSeed] {
    var seeds: [FuzzSeed] = []
    // Every datagram of a real exchange between two links (data, acks with selective bitmaps,
    // retransmissions), at two datagram sizes; near-duplicates dropped to keep the corpus small.
    for size in [20, 182] {
        var kinds: Set<String> = []
        for (index, datagram) in LinkCapture.exchange(datagramSize: size).enumerated() {
            let kind = frameKind(datagram)
            guard kinds.insert(kind).inserted else { continue }
            seeds.append(FuzzSeed("mtu\(size)-\(index)-\(kind)", datagram))
        }
    }
    // Hand-made edge cases, built with the encoder.
    let one: [UInt8] = [0x42]
    seeds.append(FuzzSeed("edge-start-end-1byte", FrameCodec.encodeData(
        sequence: SequenceNumber(8191), messageLength: 1, isEnd: true, bytes: one[...])))
    seeds.append(FuzzSeed("edge-ack-max-bitmap", FrameCodec.encodeAck(
        cumulative: SequenceNumber(4095), selectiveAcks: [UInt8](repeating: 0xFF, count: FrameLayout.maxSelectiveAckBytes))))
    var badCRC = FrameCodec.encodeAck(cumulative: .zero, selectiveAcks: [1])
    badCRC[badCRC.count - 1] ^= 0x01
    seeds.append(FuzzSeed("edge-bad-crc", badCRC))
    return seeds
}

/// A short description of a datagram, for seed names and for picking one seed per kind.
func frameKind(_ datagram: [UInt8]) -> String {
    switch try? FrameCodec.decode(datagram) {
    case .data(_, let fragment)?:
        return "data" + (fragment.isStart ? "-start" : "") + (fragment.isEnd ? "-end" : "")
            + "-\(fragment.bytes.count >= 16 ? "long" : "short")"
    case .ack(_, let bitmap)?:
        return bitmap.isEmpty ? "ack" : "ack-sack\(min(bitmap.count, 4))"
    case nil:
        return "invalid"
    }
}

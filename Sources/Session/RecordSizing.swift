import Framing
import Record

/// How many file bytes a `data` record carries so that its framing message fills whole frames.
///
/// A data message is the record overhead (header and tag, 17 bytes), the transfer kind byte and
/// the file bytes; the link cuts it into frames of the datagram size (a start frame also carries
/// the 2-byte length). 4096 bytes at 510-byte datagrams make 4114 bytes, 8 full frames and a
/// ninth with 68: 4028 bytes fill 8 exactly. Of the sizes that fill their last frame (and 4096,
/// the most a record may carry), the one with the most file bytes per frame wins.
public enum RecordSizing {
    /// Bytes a data message adds to its file bytes: the record's header and tag, the kind byte.
    public static let dataMessageOverhead = recordOverhead + 1

    public static func dataPerRecord(datagramSize: Int, limit: Int = 4_096) -> Int {
        let first = FrameLayout.fragmentCapacity(datagramSize: datagramSize, isStart: true)
        let next = FrameLayout.fragmentCapacity(datagramSize: datagramSize, isStart: false)
        guard first > dataMessageOverhead, next > 0 else { return limit }
        var best = (data: 0, frames: 1)
        var frames = 1
        while true {
            let fits = first + (frames - 1) * next - dataMessageOverhead
            let data = min(fits, limit)
            // More bytes per frame wins; at equal rate, the larger record (fewer tags).
            if data * best.frames > best.data * frames || (data * best.frames == best.data * frames && data > best.data) {
                best = (data, frames)
            }
            if fits >= limit { break }
            frames += 1
        }
        return best.data
    }
}

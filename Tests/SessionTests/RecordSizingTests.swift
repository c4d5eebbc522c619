import Framing
import Session
import Testing

/// Data records sized so that their framing message ends at a frame boundary (issue 11).
@Test(arguments: [
    (510, 4_028),   // 8 frames of 510 (9 with 4096 file bytes, the last one carrying 68)
    (4_120, 4_096), // one frame holds a whole 4096-byte record
    (4_096, 4_072), // one full frame beats 4096 bytes over two
    (244, 4_060),   // 17 frames of 244
])
func recordsFillWholeFrames(datagramSize: Int, expected: Int) {
    let data = RecordSizing.dataPerRecord(datagramSize: datagramSize)
    #expect(data == expected)
    let message = data + RecordSizing.dataMessageOverhead
    let first = FrameLayout.fragmentCapacity(datagramSize: datagramSize, isStart: true)
    let next = FrameLayout.fragmentCapacity(datagramSize: datagramSize, isStart: false)
    if data < 4_096 { #expect((message - first) % next == 0, "the last frame is full") }
}

@Test func tinyDatagramsStillCarryData() {
    for size in [8, 20, 23, 30, 100] {
        let data = RecordSizing.dataPerRecord(datagramSize: size)
        #expect((1...4_096).contains(data), "datagram \(size)")
    }
}

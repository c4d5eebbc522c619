import Pipeline
import Testing
import TestDoubles
@testable import Durable

private let bodies: [[UInt8]] = [[], [1], Array(0..<200), [UInt8](repeating: 7, count: 5_000)]

private func readAll(_ bytes: [UInt8], pieces: Int) -> (bodies: [[UInt8]], consumed: UInt64, stopped: Bool) {
    var reader = RecordFrameReader()
    var read: [[UInt8]] = []
    var offset = 0
    while offset < bytes.count {
        let end = min(bytes.count, offset + pieces)
        reader.feed(bytes[offset..<end]) { read.append($0); return true }
        offset = end
    }
    return (read, reader.consumed, reader.stopped)
}

/// The one format: frames read back whole however the bytes are cut into pieces (a byte at a
/// time included), and a torn end is never taken for a record.
@Test func framesReadBackFedWholeOrByteByByte() {
    let bytes = bodies.flatMap(RecordFrame.frame)
    for pieces in [1, 3, 64, bytes.count] {
        let read = readAll(bytes, pieces: pieces)
        #expect(read.bodies == bodies, "pieces of \(pieces)")
        #expect(read.consumed == UInt64(bytes.count) && !read.stopped)
    }
    let whole = RecordFrame.frame(bodies[2]).count
    for cut in 1..<whole {
        let read = readAll(Array(bytes.prefix(RecordFrame.frame(bodies[0]).count + RecordFrame.frame(bodies[1]).count + cut)), pieces: 7)
        #expect(read.bodies == Array(bodies.prefix(2)), "cut \(cut) bytes into the third frame")
    }
}

/// Damage: a flipped bit anywhere in a frame stops reading before it; a length over the bound
/// stops at once, before the reader holds that many bytes; a body the caller refuses counts as
/// damage.
@Test func damageStopsReadingBeforeTheDamagedFrame() {
    let first = RecordFrame.frame(bodies[1]), second = RecordFrame.frame(bodies[2])
    for index in 0..<second.count {
        var damaged = first + second
        damaged[first.count + index] ^= 0x04
        let read = readAll(damaged, pieces: 16)
        #expect(read.bodies == [bodies[1]] && read.consumed == UInt64(first.count), "bit at \(index)")   // (a longer length waits, as a torn frame does)
    }
    let tooLong: [UInt8] = [0x00, 0x01, 0x00, 0x01] + [UInt8](repeating: 0, count: 32)
    #expect(readAll(first + tooLong, pieces: 5).stopped)
    var reader = RecordFrameReader()
    reader.feed((first + second)[...]) { $0 != bodies[2] }
    #expect(reader.consumed == UInt64(first.count) && reader.stopped)
}

/// A journal opens what it wrote, cuts a torn end before the next append, and replaces a file
/// of another format (saying so).
@Test func aJournalOpensCutsAndReplaces() throws {
    let disk = SimulatedDisk()
    let magic = Array("BSTEST01".utf8)
    let (journal, found) = try Journal.open(disk: disk, name: "j", magic: magic)
    #expect(found == .created)
    try journal.append([1, 2, 3])
    try disk.write("j", [0, 0, 0, 40, 9], at: try disk.length("j"))   // a torn append
    var seen: [[UInt8]] = []
    let (again, reread) = try Journal.open(disk: disk, name: "j", magic: magic) { seen.append($0); return true }
    #expect(seen == [[1, 2, 3]] && reread == .read(cut: 5))
    try again.append([4])
    #expect(try again.records() == [[1, 2, 3], [4]])
    try disk.replace("j", with: Array("something else entirely".utf8))
    let (fresh, replaced) = try Journal.open(disk: disk, name: "j", magic: magic)
    let left = try fresh.records()
    #expect(replaced == .replacedUnreadable && left.isEmpty)
}

import Foundation

/// Searches this process's own writable memory (every readable, writable mapping in
/// /proc/self/maps, read through /proc/self/mem) for a byte string, to show that no copy of a
/// secret was left behind. The string is handed in XOR-masked (`masked[i] = byte ^ mask`) and
/// unmasked one byte at a time while comparing, so the search itself never holds a copy of what
/// it looks for. Linux only.
enum ProcessMemory {
    /// Mappings larger than this are address space reserved rather than used (and reading them
    /// would fault them in); they are skipped.
    static let largestMapping = 256 << 20

    /// Where the unmasked string occurs (addresses), or `nil` if memory could not be read.
    static func occurrences(ofMasked masked: [UInt8], mask: UInt8) -> [UInt]? {
        guard let first = masked.first, let maps = try? String(contentsOfFile: "/proc/self/maps", encoding: .utf8) else { return nil }
        let memory = open("/proc/self/mem", O_RDONLY | O_CLOEXEC)
        guard memory >= 0 else { return nil }
        defer { close(memory) }
        let chunk = 1 << 20
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk + masked.count, alignment: 16)
        defer { buffer.deallocate() }
        guard let base = buffer.baseAddress else { return nil }
        let firstByte = Int32(first ^ mask)
        var found: [UInt] = []
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 2, fields[1].hasPrefix("rw") else { continue }
            let bounds = fields[0].split(separator: "-").compactMap { UInt($0, radix: 16) }
            guard bounds.count == 2, bounds[1] > bounds[0], bounds[1] - bounds[0] <= UInt(largestMapping) else { continue }
            var address = bounds[0]
            while address < bounds[1] {
                // Overlapping reads, so a match across two chunks is seen.
                let want = Int(min(UInt(chunk + masked.count - 1), bounds[1] - address))
                let got = pread(memory, base, want, off_t(Int64(bitPattern: UInt64(address))))
                guard got > 0 else { break }
                var offset = 0
                while offset + masked.count <= got {
                    guard let hit = memchr(base + offset, firstByte, got - offset - masked.count + 1) else { break }
                    let at = base.distance(to: hit)
                    var matches = true
                    for index in 1..<masked.count where buffer[at + index] != masked[index] ^ mask {
                        matches = false
                        break
                    }
                    if matches { found.append(address + UInt(at)) }
                    offset = at + 1
                }
                address += UInt(min(got, chunk))
            }
        }
        return found
    }

    /// Runs `body` on a thread of its own and waits until that thread has ended. What the thread
    /// freed stays in its malloc arena's free lists, where nothing else is likely to reuse it
    /// before a scan (on the calling thread, the next allocations of the same size would overwrite
    /// freed copies at once and hide them).
    static func onOwnThread(_ body: @escaping () -> Void) {
        final class Work {
            let body: () -> Void
            init(_ body: @escaping () -> Void) { self.body = body }
        }
        let work = Unmanaged.passRetained(Work(body)).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(&thread, nil, { argument in
            guard let argument else { return nil }
            let work = Unmanaged<Work>.fromOpaque(argument).takeRetainedValue()
            work.body()
            return nil
        }, work)
        if created == 0 {
            pthread_join(thread, nil)
        } else {
            Unmanaged<Work>.fromOpaque(work).takeRetainedValue().body()
        }
    }
}

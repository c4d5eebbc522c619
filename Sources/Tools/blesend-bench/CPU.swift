import Framing
import Pipeline
import Session
import Sodium
import TestDoubles
import Transfer

/// Pipeline CPU cost: wall time of the whole stack (sender session → datagrams → receiver session,
/// handed over directly, no link simulation) over wall time of bare XChaCha20-Poly1305 seal+open of
/// the same bytes in 4096-byte records, measured interleaved in one process.
enum CPUBench {
    static let recordSize = TransferConstants.maxDataPerRecord
    static let goal = 2.0
    static let rounds = 3

    static func run(fileSize: Int = 64 << 20, mtus: [Int] = [247, 517]) -> Bool {
        print("== cpu: \(fileSize >> 20) MiB file, whole stack vs bare libsodium XChaCha20-Poly1305 seal+open of \(recordSize)-byte records")
        print("   (interleaved baseline/pipeline x \(rounds), medians; ContinuousClock wall time)")
        // The file: random bytes held in memory, so reading it is a memcpy, not a computation.
        var file = [UInt8](repeating: 0, count: fileSize)
        file.withUnsafeMutableBytes { Random.fill($0) }
        let source = MemoryFileSource(name: "cpu.bin", bytes: file)
        file = []
        let key = SecureBytes.random(count: AEAD.xChaCha20Poly1305IETF.keyLength)

        var allPass = true
        for mtu in mtus {
            let datagramSize = writeDatagramSize(mtu: mtu)
            var baselines: [Duration] = []
            var pipelines: [Duration] = []
            for round in 1...rounds {
                let b = baseline(bytes: fileSize, key: key)
                baselines.append(b)
                let p = pipeline(source: source, datagramSize: datagramSize)
                pipelines.append(p)
                note("  [cpu MTU \(mtu)] round \(round): baseline \(milliseconds(b)), pipeline \(milliseconds(p))")
            }
            let mb = median(baselines), mp = median(pipelines)
            let ratio = seconds(mp) / seconds(mb)
            let pass = ratio <= goal
            allPass = allPass && pass
            let mibps = { (d: Duration) in fixed(Double(fileSize) / 1_048_576 / seconds(d), 0) + " MiB/s" }
            print("MTU \(mtu) (datagram \(datagramSize) B): baseline median \(milliseconds(mb)) (\(mibps(mb)))"
                  + ", pipeline median \(milliseconds(mp)) (\(mibps(mp)))")
            print("   runs baseline [\(baselines.map(milliseconds).joined(separator: ", "))]"
                  + " pipeline [\(pipelines.map(milliseconds).joined(separator: ", "))]")
            print("   ratio pipeline/baseline \(fixed(ratio, 2))   goal ≤ \(fixed(goal, 1))  \(verdict(pass))")
            flushOutput()
        }
        components(fileSize: fileSize, key: key)
        return allPass
    }

    /// Work the protocol itself requires besides the AEAD, timed alone on the same bytes (medians of 3):
    /// the whole-file BLAKE2b-256 (sender and receiver each hash every byte) and the framing CRC-16
    /// (every datagram byte, once to send and once to check), here over 244-byte datagrams.
    static func components(fileSize: Int, key: SecureBytes) {
        var data = [UInt8](repeating: 0, count: recordSize)
        data.withUnsafeMutableBytes { Random.fill($0) }
        let records = fileSize / recordSize
        let clock = ContinuousClock()
        var aead: [Duration] = [], hash: [Duration] = [], crc: [Duration] = []
        var sink: UInt64 = 0
        for _ in 0..<rounds {
            aead.append(baseline(bytes: fileSize, key: key))
            var start = clock.now
            for _ in 0..<2 {
                var hasher = BLAKE2b(outputLength: 32)
                for _ in 0..<records { hasher.update(data) }
                sink &+= UInt64(hasher.finalize()[0])
            }
            hash.append(clock.now - start)
            let frame = Array(data[0..<242])
            let frames = fileSize / 240
            start = clock.now
            for _ in 0..<(2 * frames) { sink &+= UInt64(CRC16.checksum(frame)) }
            crc.append(clock.now - start)
        }
        let a = median(aead), h = median(hash), c = median(crc)
        print("components, \(fileSize >> 20) MiB, medians of \(rounds): XChaCha20-Poly1305 seal+open \(milliseconds(a)) (1.00)"
              + ", BLAKE2b-256 x2 (both sides) \(milliseconds(h)) (\(fixed(seconds(h) / seconds(a), 2)))"
              + ", CRC-16 x2 over 244-byte frames \(milliseconds(c)) (\(fixed(seconds(c) / seconds(a), 2)))")
        print("   floor for the ratio with zero other overhead: \(fixed((seconds(a) + seconds(h) + seconds(c)) / seconds(a), 2))"
              + "  [\(sink & 1)]")
        flushOutput()
    }

    /// Seal then open every record of `bytes` bytes with reused buffers (the pointer-based API),
    /// nonce = 16 zero bytes ‖ counter, associated data = the one-byte record header, as the record layer does.
    static func baseline(bytes: Int, key: SecureBytes) -> Duration {
        let records = (bytes + recordSize - 1) / recordSize
        var plaintext = [UInt8](repeating: 0, count: recordSize)
        plaintext.withUnsafeMutableBytes { Random.fill($0) }
        var sealed = [UInt8](repeating: 0, count: recordSize + AEAD.xChaCha20Poly1305IETF.tagLength)
        var opened = [UInt8](repeating: 0, count: recordSize)
        var nonce = [UInt8](repeating: 0, count: AEAD.xChaCha20Poly1305IETF.nonceLength)
        let header: [UInt8] = [0]
        var failures = 0
        let clock = ContinuousClock()
        let start = clock.now
        plaintext.withUnsafeBytes { plain in
            sealed.withUnsafeMutableBytes { sealedBytes in
                opened.withUnsafeMutableBytes { openedBytes in
                    nonce.withUnsafeMutableBytes { nonceBytes in
                        header.withUnsafeBytes { ad in
                            for counter in 0..<UInt64(records) {
                                for i in 0..<8 { nonceBytes[16 + i] = UInt8(truncatingIfNeeded: counter >> UInt64(56 - 8 * i)) }
                                let n = UnsafeRawBufferPointer(nonceBytes)
                                do {
                                    let count = try AEAD.xChaCha20Poly1305IETF.seal(key: key, nonce: n, plaintext: plain,
                                                                               associatedData: ad, into: sealedBytes)
                                    _ = try AEAD.xChaCha20Poly1305IETF.open(key: key, nonce: n,
                                                                       ciphertext: UnsafeRawBufferPointer(rebasing: sealedBytes[..<count]),
                                                                       associatedData: ad, into: openedBytes)
                                } catch {
                                    failures += 1
                                }
                            }
                        }
                    }
                }
            }
        }
        let elapsed = clock.now - start
        precondition(failures == 0 && opened == plaintext, "baseline round trip failed")
        return elapsed
    }

    /// The whole stack: handshake, transfer messages, records, framing, ARQ and acks both ways,
    /// whole-file BLAKE2b on both sides, into a store that only counts bytes.
    static func pipeline(source: MemoryFileSource, datagramSize: Int) -> Duration {
        let store = CountingFileStore()
        var (sender, receiver) = makeEndpoints(files: [source], store: store)
        let clock = ContinuousClock()
        let start = clock.now
        let result: HandOffResult
        do {
            result = try runHandOff(sender: &sender, receiver: &receiver, datagramSize: datagramSize)
        } catch {
            fatalError("pipeline run failed: \(error)")
        }
        let elapsed = clock.now - start
        precondition(result.finished && result.savedFiles == 1 && result.failures.isEmpty
                     && store.committedNames == ["cpu.bin"] && store.bytesWritten == UInt64(source.bytes.count),
                     "pipeline run did not deliver the file intact: \(result.failures)")
        return elapsed
    }
}

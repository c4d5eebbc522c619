import Sodium
import Testing

@Suite struct SecureBytesTests {
    @Test func copyingKeepsBytesAndCount() {
        let secret = SecureBytes(copying: [1, 2, 3])
        #expect(secret.count == 3)
        #expect(secret.withUnsafeBytes { Array($0) } == [1, 2, 3])
        #expect(SecureBytes(count: 5).withUnsafeBytes { Array($0) } == [0, 0, 0, 0, 0])
        #expect(SecureBytes(count: 0).count == 0)
    }

    @Test func equalityComparesContentsAndSize() {
        #expect(SecureBytes(copying: [1, 2, 3]) == SecureBytes(copying: [1, 2, 3]))
        #expect(SecureBytes(copying: [1, 2, 3]) != SecureBytes(copying: [1, 2, 4]))
        #expect(SecureBytes(copying: [1, 2, 3]) != SecureBytes(copying: [1, 2]))
        #expect(SecureBytes(count: 0) == SecureBytes(count: 0))
    }

    @Test func descriptionNeverShowsBytes() {
        let secret = SecureBytes(copying: [0xde, 0xad, 0xbe, 0xef])
        #expect(secret.description == "SecureBytes(4 bytes)")
        #expect(String(reflecting: secret) == "SecureBytes(4 bytes)")
        #expect(!"\(secret)".contains("de"))
    }

    @Test func randomIsRandomAndSized() {
        let a = SecureBytes.random(count: 32), b = SecureBytes.random(count: 32)
        #expect(a.count == 32 && a != b)
        #expect(Random.bytes(0) == [])
        #expect(Random.bytes(17).count == 17)
        #expect(Random.bytes(32) != Random.bytes(32))
    }

    @Test func mutableAccessWrites() {
        let secret = SecureBytes(count: 2)
        secret.withUnsafeMutableBytes { $0[1] = 7 }
        #expect(secret.withUnsafeBytes { Array($0) } == [0, 7])
    }

    @Test func secureZeroClearsArray() {
        var bytes: [UInt8] = [1, 2, 3, 4]
        secureZero(&bytes)
        #expect(bytes == [0, 0, 0, 0])
        var empty: [UInt8] = []
        secureZero(&empty)
        #expect(empty.isEmpty)
    }
}

import Sodium
import TestSupport
import Testing

@Suite struct Ristretto255Tests {
    /// RFC 9496 §4.4's generator B and the group order L (little-endian).
    static let basePoint = "e2f2ae0a6abc4e71a884a961c500515f58e30b6aa582dd8db6a65945e08d2d76"
    static let order = "edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010"

    private func secret(_ hexText: String, paddedTo count: Int = 32) throws -> SecureBytes {
        let value = try #require(bytes(hex: hexText))
        return SecureBytes(copying: value + [UInt8](repeating: 0, count: count - value.count))
    }

    private func open(_ secret: SecureBytes) -> [UInt8] { secret.withUnsafeBytes { Array($0) } }

    /// draft-irtf-cfrg-cpace-21 B.3.10: a valid scalar multiplication.
    @Test func cpaceValidScalarMultiplication() throws {
        let product = try Ristretto255.multiply(
            scalar: try secret("7cd0e075fa7955ba52c02759a6c90dbbfc10e6d40aea8d283e407d88cf538a05"),
            point: try #require(bytes(hex: "2c3c6b8c4f3800e7aef6864025b4ed79bd599117e427c41bd47d93d654b4a51c")))
        #expect(hex(open(product)) == "7c13645fe790a468f62c39beb7388e541d8405d1ade69d1778c5fe3e7f6b600e")
    }

    /// draft-irtf-cfrg-cpace-21 B.3.11: a non-canonical encoding and the identity fail.
    @Test func invalidPointsAndTheIdentityFail() throws {
        let scalar = try secret("7cd0e075fa7955ba52c02759a6c90dbbfc10e6d40aea8d283e407d88cf538a05")
        for point in ["2b3c6b8c4f3800e7aef6864025b4ed79bd599117e427c41bd47d93d654b4a51c", hex(Ristretto255.identity)] {
            let encoded = try #require(bytes(hex: point))
            #expect(throws: SodiumError.invalidGroupElement) { try Ristretto255.multiply(scalar: scalar, point: encoded) }
            #expect(throws: SodiumError.invalidGroupElement) { try Ristretto255.multiply(scalar: scalar, point: SecureBytes(copying: encoded)) }
        }
        // A non-canonical encoding is not a point; the identity is one (which `multiply` refuses).
        #expect(!Ristretto255.isValidPoint(try #require(bytes(hex: "2b3c6b8c4f3800e7aef6864025b4ed79bd599117e427c41bd47d93d654b4a51c"))))
        #expect(Ristretto255.isValidPoint(Ristretto255.identity))
        #expect(throws: SodiumError.invalidGroupElement) { try Ristretto255.multiply(scalar: scalar, point: [UInt8](repeating: 1, count: 31)) }
        #expect(throws: SodiumError.invalidKeyLength) {
            try Ristretto255.multiply(scalar: SecureBytes(count: 31), point: try #require(bytes(hex: Self.basePoint)))
        }
    }

    @Test func reductionModuloTheOrder() throws {
        let base = try #require(bytes(hex: Self.basePoint))
        #expect(Ristretto255.isValidPoint(base))
        // L + 1 reduces to 1, and 1 · B = B.
        var lPlusOne = try #require(bytes(hex: Self.order))
        lPlusOne[0] += 1
        let one = try Ristretto255.reduce(wideScalar: SecureBytes(copying: lPlusOne + [UInt8](repeating: 0, count: 32)))
        #expect(open(one) == [1] + [UInt8](repeating: 0, count: 31))
        #expect(open(try Ristretto255.multiply(scalar: one, point: base)) == base)
        // L reduces to 0, and 0 · B is the identity: refused.
        let zero = try Ristretto255.reduce(wideScalar: try secret(Self.order, paddedTo: 64))
        #expect(open(zero) == [UInt8](repeating: 0, count: 32))
        #expect(throws: SodiumError.invalidGroupElement) { try Ristretto255.multiply(scalar: zero, point: base) }
        #expect(throws: SodiumError.invalidKeyLength) { try Ristretto255.reduce(wideScalar: SecureBytes(count: 32)) }
    }

    @Test func pointsFromHashAreValidAndDiffer() throws {
        let first = try Ristretto255.point(fromHash: SecureBytes(copying: SHA512.hash(Array("one".utf8))))
        let second = try Ristretto255.point(fromHash: SecureBytes(copying: SHA512.hash(Array("two".utf8))))
        #expect(Ristretto255.isValidPoint(open(first)))
        #expect(first != second)
        #expect(throws: SodiumError.invalidKeyLength) { try Ristretto255.point(fromHash: SecureBytes(count: 32)) }
    }

    @Test func diffieHellmanAgrees() throws {
        let base = try Ristretto255.point(fromHash: SecureBytes.random(count: 64))
        let a = try Ristretto255.reduce(wideScalar: SecureBytes.random(count: 64))
        let b = try Ristretto255.reduce(wideScalar: SecureBytes.random(count: 64))
        let shareA = open(try Ristretto255.multiply(scalar: a, point: base))
        let shareB = open(try Ristretto255.multiply(scalar: b, point: base))
        #expect(try Ristretto255.multiply(scalar: a, point: shareB) == Ristretto255.multiply(scalar: b, point: shareA))
    }
}

import Sodium

/// CPace-RISTR255-SHA512 (draft-irtf-cfrg-cpace-21: "CPace protocol instructions", "Common
/// function for computing generators", "CPace group objects G_Ristretto255 and G_Decaf448"), in
/// the initiator-responder setting, on libsodium. Checked against the draft's vectors
/// (Tests/Vectors/cpace, from its appendix B.3).
///
///     gen_str = lv_cat(DSI, PRS, zero_bytes(len_zpad), CI, sid)
///     len_zpad = max(0, 128 - 1 - len(prepend_len(PRS)) - len(prepend_len(DSI)))
///     g   = ristretto255_from_hash(SHA-512(gen_str))
///     Y   = y · g                     y: 64 random bytes reduced modulo the group order
///     K   = y · Y_other               the identity, or a share that does not decode, fails the run
///     ISK = SHA-512(lv_cat(DSI ‖ "_ISK", sid, K) ‖ lv_cat(Ya, ADa) ‖ lv_cat(Yb, ADb))
///
/// The scalar is sampled as the draft allows for prime-order groups ("uniform sampling between 1
/// and group_order - 1"): 64 bytes reduced leave a bias of about 2^-260, and a zero scalar
/// (probability about 2^-252) fails when its share is computed (the identity).
/// The generator, scalars, `K` and `ISK` are `SecureBytes`; a generator is as good as the
/// password to whoever holds it.
enum CPace {
    /// `G.DSI` for ristretto255.
    static let domainSeparator: [UInt8] = Array("CPaceRistretto255".utf8)
    /// `G.DSI ‖ "_ISK"`.
    static let iskDomainSeparator: [UInt8] = domainSeparator + Array("_ISK".utf8)
    /// Bytes of ISK (SHA-512).
    static let iskLength = SHA512.outputLength

    /// `generator_string(G.DSI, PRS, CI, sid, H.s_in_bytes)` for SHA-512 (128-byte blocks). It
    /// holds the password: the caller wipes it (`secureZero`).
    static func generatorString(prs: [UInt8], channelIdentifier: [UInt8], sid: [UInt8]) -> [UInt8] {
        let padding = max(0, SHA512.blockLength - 1 - LengthValue.prependLength(prs).count
            - LengthValue.prependLength(domainSeparator).count)
        return LengthValue.concatenate([domainSeparator, prs, [UInt8](repeating: 0, count: padding), channelIdentifier, sid])
    }

    /// `G.calculate_generator(H, PRS, CI, sid)`: the encoded generator `g`.
    static func calculateGenerator(prs: [UInt8], channelIdentifier: [UInt8], sid: [UInt8]) throws(SodiumError) -> SecureBytes {
        var string = generatorString(prs: prs, channelIdentifier: channelIdentifier, sid: sid)
        defer { secureZero(&string) }
        return try Ristretto255.point(fromHash: SHA512.secretHash(string))
    }

    /// A scalar from 64 random bytes (which are wiped): `scalar_reduce(bytes)`.
    static func scalar(fromRandom bytes: inout [UInt8]) throws(SodiumError) -> SecureBytes {
        defer { secureZero(&bytes) }
        return try Ristretto255.reduce(wideScalar: SecureBytes(copying: bytes))
    }

    /// `G.scalar_mult(y, g)`: our share.
    static func share(scalar: SecureBytes, generator: SecureBytes) throws(SodiumError) -> [UInt8] {
        try Ristretto255.multiply(scalar: scalar, point: generator).withUnsafeBytes { Array($0) }
    }

    /// `G.scalar_mult_vfy(y, Y_other)`, failing (`.invalidGroupElement`) where the draft returns
    /// `G.I` and aborts.
    static func sharedPoint(scalar: SecureBytes, peerShare: some Collection<UInt8>) throws(SodiumError) -> SecureBytes {
        try Ristretto255.multiply(scalar: scalar, point: peerShare)
    }

    /// `transcript_ir(Ya, ADa, Yb, ADb) = lv_cat(Ya, ADa) ‖ lv_cat(Yb, ADb)`.
    static func initiatorResponderTranscript(
        initiatorShare: [UInt8], initiatorData: [UInt8], responderShare: [UInt8], responderData: [UInt8]
    ) -> [UInt8] {
        LengthValue.concatenate([initiatorShare, initiatorData]) + LengthValue.concatenate([responderShare, responderData])
    }

    /// `ISK = H.hash(lv_cat(G.DSI ‖ "_ISK", sid, K) ‖ transcript_ir(Ya, ADa, Yb, ADb))`; `K` is
    /// hashed where it is, never copied.
    static func intermediateSessionKey(
        sid: [UInt8], sharedPoint: SecureBytes,
        initiatorShare: [UInt8], initiatorData: [UInt8], responderShare: [UInt8], responderData: [UInt8]
    ) -> SecureBytes {
        var hash = SHA512()
        hash.updatePrependingLength(iskDomainSeparator)
        hash.updatePrependingLength(sid)
        hash.updatePrependingLength(sharedPoint)
        hash.update(initiatorResponderTranscript(
            initiatorShare: initiatorShare, initiatorData: initiatorData,
            responderShare: responderShare, responderData: responderData))
        return hash.finalizeSecret()
    }
}

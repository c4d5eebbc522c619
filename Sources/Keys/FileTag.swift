import Sodium

extension PublicKey {
    /// A short tag for names a receiver with this key leaves on disk (blerecv's hidden
    /// temporaries, `.NAME.TAG-XXXXXX.blesend-part`), so that at start it removes its own leftovers
    /// and no one else's: 12 lowercase hex digits of BLAKE2b-256("blesend file tag" ‖ key). Not a
    /// fingerprint: nothing is checked with it.
    public var fileTag: String {
        let digest = BLAKE2b.hash(Array("blesend file tag".utf8) + bytes, outputLength: 32)
        let digits = Array("0123456789abcdef")
        return String(digest.prefix(6).flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0xF)]] })
    }
}

#if canImport(Glibc)
import Glibc
#endif
import Keys

/// A peer's public key as `blerecv trust add` and `blesend receivers add` take it: the key text
/// (pasted: white space around or inside it is fine), a `.pub` file, or `-` for standard input
/// (one line from a terminal; from a pipe, everything up to 64 KiB, such as a whole `.pub` file).
enum KeyArgument {
    static let standardInputLimit = 64 * 1024

    static func publicKey(_ argument: String, input: Int32 = 0) throws(KeyError) -> PublicKey {
        guard argument == "-" else { return try KeyFile.resolvePublicKey(argument) }
        let text = try read(input, oneLine: isatty(input) == 1)
        return try PublicKey(pasted: text)
    }

    /// What `fd` holds, up to the end (or the first newline, with `oneLine`), at most `standardInputLimit` bytes.
    static func read(_ fd: Int32, oneLine: Bool) throws(KeyError) -> [UInt8] {
        var text: [UInt8] = []
        var byte: UInt8 = 0
        var chunk = [UInt8](repeating: 0, count: 4096)
        while text.count <= standardInputLimit {
            // From a terminal, a byte at a time: nothing after the line is taken from the next reader.
            let n = oneLine ? Glibc.read(fd, &byte, 1) : chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw KeyError(.io, "cannot read the key from standard input: \(String(cString: strerror(errno)))") }
            if n == 0 { break }
            if oneLine {
                if byte == 0x0A { break }
                text.append(byte)
            } else {
                text += chunk.prefix(n)
            }
        }
        guard text.count <= standardInputLimit else {
            throw KeyError(.badEncoding, "standard input holds more than 64 KiB: not a key", hint: "give the key's line, or its .pub file")
        }
        return text
    }
}

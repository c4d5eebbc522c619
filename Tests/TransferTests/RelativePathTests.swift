import Testing
import Transfer

/// Bytes of a UTF-8 string, for wire paths written as text.
private func wire(_ text: String) -> [UInt8] { Array(text.utf8) }

private func parse(_ bytes: [UInt8]) -> Result<[String], RelativePathError> {
    Result { () throws(RelativePathError) in try RelativePath(wire: bytes).components }
}

@Test(arguments: [
    ("photos", ["photos"]),
    ("photos/2024/beach.jpg", ["photos", "2024", "beach.jpg"]),
    ("a/b c/d", ["a", "b c", "d"]),
    ("a/...b", ["a", "b"]),
    ("a/.hidden/x", ["a", "hidden", "x"]),
    ("a/ spaced /x", ["a", "spaced", "x"]),
    ("a/evil\u{202E}gpj.exe", ["a", "evil_gpj.exe"]),
    ("a/zero\u{200B}width", ["a", "zero_width"]),
    ("a/. .x", ["a", "x"]),
    ("a.b/c..d", ["a.b", "c..d"]),
] as [(String, [String])])
func validPathsAreReducedComponentByComponent(_ path: String, _ expected: [String]) throws {
    let parsed = try RelativePath(wire: wire(path))
    #expect(parsed.components.map { Array($0.utf8) } == expected.map { Array($0.utf8) })
    #expect(parsed.description == expected.joined(separator: "/"))
}

@Test(arguments: [
    ([], .empty),
    (wire("/etc/passwd"), .absolute),
    (wire("/"), .absolute),
    (wire("//a"), .absolute),
    (wire("a//b"), .emptyComponent),
    (wire("a/"), .emptyComponent),
    (wire("a/b/"), .emptyComponent),
    (wire("."), .dotComponent),
    (wire(".."), .dotComponent),
    (wire("a/../b"), .dotComponent),
    (wire("a/./b"), .dotComponent),
    (wire("a/.."), .dotComponent),
    (wire("a\\b"), .separator),
    (wire("a/..\\..\\etc"), .separator),
    (wire("a/b\u{0}c"), .controlCharacter),
    (wire("a\u{0}"), .controlCharacter),
    (wire("a/line\nbreak"), .controlCharacter),
    (wire("a/\u{1B}[31mred"), .controlCharacter),
    (wire("a/del\u{7F}"), .controlCharacter),
    (wire("a/c1\u{85}"), .controlCharacter),
    (wire("a/c1\u{9F}"), .controlCharacter),
    (wire("a/..."), .unusableComponent),
    (wire("a/ . "), .unusableComponent),
    (wire("a/\u{3000}"), .unusableComponent),
    ([0x61, 0x2F, 0xFF], .notUTF8),
    ([0x61, 0xC3], .notUTF8),
    ([0xED, 0xA0, 0x80], .notUTF8),  // an encoded surrogate
    ([0xC0, 0xAF], .notUTF8),  // an overlong `/`
    (wire(String(repeating: "a/", count: 32) + "a"), .tooDeep),
    (wire(String(repeating: "/", count: 40)), .absolute),
    (wire(String(repeating: "x", count: 256)), .componentTooLong),
    (wire("a/" + String(repeating: "ü", count: 128)), .componentTooLong),
    (wire(String(repeating: "abcdefg/", count: 128) + "h"), .tooLong),
    (wire(String(repeating: "x", count: 1_025)), .tooLong),
] as [([UInt8], RelativePathError)])
func hostilePathsAreRefusedWithTheirReason(_ bytes: [UInt8], _ reason: RelativePathError) {
    #expect(parse(bytes) == .failure(reason))
}

@Test func theBoundsAreInclusive() throws {
    let deepest = Array(repeating: "d", count: TransferConstants.maxPathDepth)
    #expect(try RelativePath(wire: wire(deepest.joined(separator: "/"))).components.count == 32)

    // 1024 bytes exactly: 255 + 255 + 255 + 254 bytes of names, `/a`, four separators.
    let longest = [255, 255, 255, 254].map { String(repeating: "l", count: $0) }.joined(separator: "/") + "/a"
    #expect(longest.utf8.count == TransferConstants.maxPathLength)
    #expect(try RelativePath(wire: wire(longest)).components.count == 5)
    #expect(parse(wire(longest + "d")) == .failure(.tooLong))

    let widest = String(repeating: "é", count: 127) + "x"  // 255 bytes
    #expect(try RelativePath(wire: wire(widest)).components == [widest])
}

@Test func unicodeNamesAreKeptAsSentInEitherNormalForm() throws {
    let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
    let nfc = try RelativePath(wire: wire("dir/" + composed))
    let nfd = try RelativePath(wire: wire("dir/" + decomposed))
    #expect(Array(nfc.components[1].utf8) == Array(composed.utf8))
    #expect(Array(nfd.components[1].utf8) == Array(decomposed.utf8))
    // Swift calls the two strings equal; as paths on disk they are two names.
    #expect(composed == decomposed)
    #expect(nfc != nfd)
    #expect(Set([nfc, nfd]).count == 2)
    #expect(try RelativePath(wire: wire("日本語/ファイル.txt")).components == ["日本語", "ファイル.txt"])
    #expect(try RelativePath(wire: wire("emoji/👩‍👩‍👧.png")).components == ["emoji", "👩_👩_👧.png"])
}

@Test func twoWirePathsCanReduceToTheSamePath() throws {
    #expect(try RelativePath(wire: wire("a/.x")) == RelativePath(wire: wire("a/x")))
    #expect(try RelativePath(wire: wire(".a/x")) == RelativePath(wire: wire("a/ x ")))
}

@Test func theSenderBuildsWhatTheReceiverAccepts() throws {
    let bytes = try RelativePath.wire(components: ["photos", "2024", ".hidden", "café.jpg"])
    #expect(bytes == wire("photos/2024/.hidden/café.jpg"))
    #expect(try RelativePath(wire: bytes).components == ["photos", "2024", "hidden", "café.jpg"])

    // The sender round trip: every valid wire path splits into components that build it again.
    for path in ["a", "a/b", "x y/z.txt", "ü/é/ß"] {
        let components = path.split(separator: "/").map(String.init)
        #expect(try RelativePath.wire(components: components) == wire(path))
    }
}

@Test(arguments: [
    ([], .empty),
    (["a/b"], .separator),
    (["photos", "a\\b"], .separator),
    (["photos", ""], .emptyComponent),
    (["photos", ".."], .dotComponent),
    (["photos", "bell\u{7}"], .controlCharacter),
    (["photos", "..."], .unusableComponent),
    (["photos", String(repeating: "n", count: 256)], .componentTooLong),
    (Array(repeating: "d", count: 33), .tooDeep),
    (Array(repeating: String(repeating: "n", count: 200), count: 6), .tooLong),
] as [([String], RelativePathError)])
func theSenderReportsWhatItCannotSendInsteadOfCutting(_ components: [String], _ reason: RelativePathError) {
    #expect(Result { () throws(RelativePathError) in try RelativePath.wire(components: components) } == .failure(reason))
}

@Test func reasonsHaveStableCodes() {
    #expect(RelativePathError.tooDeep.code == "tooDeep")
    #expect(RelativePathError.controlCharacter.code == "controlCharacter")
    #expect("\(RelativePathError.tooLong)".contains("1024"))
}

// The fuzz executable, two ways (docs/fuzzing.md):
//
// - built by scripts/fuzz.sh with `-sanitize=fuzzer,address -DBLESEND_LIBFUZZER`: libFuzzer's own
//   `main` drives `LLVMFuzzerTestOneInput`; the target comes from `--target=NAME` (libFuzzer leaves
//   flags starting with `--` to us) or $BLESEND_FUZZ_TARGET. One executable for all targets: the
//   instrumented build and its link happen once, which is most of the cost of a CI run.
// - built normally (`swift build`): a tool that lists the targets, replays files through them, and
//   writes the seed corpus.
#if canImport(Glibc)
import Glibc
#endif
import FuzzTargets

/// One line on standard error.
private func printError(_ message: String) {
    let line = Array((message + "\n").utf8)
    line.withUnsafeBytes { _ = write(STDERR_FILENO, $0.baseAddress, $0.count) }
}

#if BLESEND_LIBFUZZER

nonisolated(unsafe) private var selectedTarget: FuzzTarget?

@_cdecl("LLVMFuzzerInitialize")
public func fuzzerInitialize(
    _ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
) -> Int32 {
    var name = getenv("BLESEND_FUZZ_TARGET").map { String(cString: $0) }
    if let arguments = argv.pointee {
        for index in 0..<Int(argc.pointee) {
            guard let raw = arguments[index] else { continue }
            let argument = String(cString: raw)
            if argument.hasPrefix("--target=") { name = String(argument.dropFirst("--target=".count)) }
        }
    }
    guard let name, let target = FuzzTargets.named(name) else {
        let names = FuzzTargets.all.map(\.name).joined(separator: " ")
        printError("blesend-fuzz: pass --target=NAME (or set BLESEND_FUZZ_TARGET); targets: \(names)")
        exit(2)
    }
    selectedTarget = target
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    selectedTarget?.run(bytes)
    return 0
}

#else

@main
struct FuzzTool {
    static let usage = """
        usage: blesend-fuzz --list
               blesend-fuzz --generate-corpus DIR [TARGET...]   write each target's seeds to DIR/TARGET/
               blesend-fuzz TARGET FILE_OR_DIR...              replay inputs through TARGET
        (fuzzing itself: scripts/fuzz.sh, which builds this with libFuzzer)
        """

    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        switch arguments.first {
        case "--list":
            for target in FuzzTargets.all { print("\(target.name)\t\(target.summary)") }
        case "--generate-corpus":
            guard arguments.count >= 2 else { fail(usage) }
            generate(into: arguments[1], names: Array(arguments.dropFirst(2)))
        case let name? where !name.hasPrefix("-") && arguments.count >= 2:
            guard let target = FuzzTargets.named(name) else { fail("unknown target \(name)") }
            var count = 0
            for path in arguments.dropFirst() {
                for file in files(at: path) {
                    guard let bytes = readFile(file) else { fail("cannot read \(file)") }
                    target.run(bytes)
                    count += 1
                }
            }
            print("\(target.name): \(count) inputs, no invariant broken")
        default:
            fail(usage)
        }
    }

    static func generate(into directory: String, names: [String]) {
        let targets = names.isEmpty ? FuzzTargets.all : names.map { name in
            guard let target = FuzzTargets.named(name) else { fail("unknown target \(name)") }
            return target
        }
        mkdir(directory, 0o755)
        for target in targets {
            let folder = directory + "/" + target.name
            mkdir(folder, 0o755)
            for old in files(at: folder) { unlink(old) }   // the folder holds generated seeds only
            let seeds = target.seeds()
            for seed in seeds {
                target.run(seed.bytes)   // every seed must pass its own target
                guard writeFile(folder + "/" + seed.name, seed.bytes) else { fail("cannot write \(folder)/\(seed.name)") }
            }
            print("\(target.name): \(seeds.count) seeds")
        }
    }

    static func fail(_ message: String) -> Never {
        printError(message)
        exit(64)
    }

    /// `path` itself, or the regular files directly inside it, sorted.
    static func files(at path: String) -> [String] {
        guard let dir = opendir(path) else { return [path] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != ".", name != ".." { names.append(path + "/" + name) }
        }
        return names.sorted()
    }

    static func readFile(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { return bytes }
            bytes += buffer.prefix(count)
        }
    }

    static func writeFile(_ path: String, _ bytes: [UInt8]) -> Bool {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { buffer in
                write(fd, UnsafeRawBufferPointer(rebasing: buffer[written...]).baseAddress, buffer.count - written)
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            written += count
        }
        return true
    }
}

#endif

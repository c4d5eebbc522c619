import Foundation
import FuzzTargets
import Testing

/// `swift test` guards what the fuzzers found: every seed-corpus file and every crasher replays
/// through the same target functions libFuzzer runs (built here without the fuzzer). An input that
/// breaks an invariant traps, which fails the test run.
@Suite("Fuzz corpus replay")
struct CorpusReplayTests {
    /// Tests/Fuzz in this checkout.
    static let fuzzDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fuzz")

    static func inputs(_ folder: String, _ target: String) throws -> [URL] {
        let directory = fuzzDirectory.appendingPathComponent(folder).appendingPathComponent(target)
        guard FileManager.default.fileExists(atPath: directory.path) else { return [] }
        return try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { !$0.lastPathComponent.hasPrefix(".") }
            .sorted { $0.path < $1.path }
    }

    @Test("the seed corpus and the crashers replay without breaking an invariant",
          arguments: FuzzTargets.all.map(\.name))
    func corpusReplays(target name: String) throws {
        let target = try #require(FuzzTargets.named(name))
        let corpus = try Self.inputs("corpus", name)
        #expect(corpus.count >= 3, "Tests/Fuzz/corpus/\(name) has \(corpus.count) files; regenerate it (docs/fuzzing.md)")
        for file in try corpus + Self.inputs("crashers", name) {
            target.run(Array(try Data(contentsOf: file)))
        }
    }

    @Test("every generated seed passes its own target", arguments: FuzzTargets.all.map(\.name))
    func generatedSeedsPass(target name: String) throws {
        let target = try #require(FuzzTargets.named(name))
        let seeds = target.seeds()
        #expect(!seeds.isEmpty)
        #expect(Set(seeds.map(\.name)).count == seeds.count, "seed names must be unique")
        for seed in seeds { target.run(seed.bytes) }
    }

    @Test func targetNamesAreUniqueAndKnown() {
        let names = FuzzTargets.all.map(\.name)
        #expect(Set(names).count == names.count)
        #expect(FuzzTargets.named("frame") != nil)
        #expect(FuzzTargets.named("no-such-target") == nil)
    }
}

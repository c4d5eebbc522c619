import Foundation
import Testing
import WireVectors

/// One vector file of Tests/Vectors/blesend, read as text.
struct VectorFile: Sendable, CustomTestStringConvertible {
    let name: String
    let text: String
    var testDescription: String { name }
}

enum VectorCorpus {
    /// Tests/Vectors/blesend, found from this file: Tests/WireVectorTests/<file> → ../Vectors/blesend.
    static let folder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Vectors").appendingPathComponent("blesend")

    /// Every *.vec file in `folder`, sorted by name, plus anything that went wrong reading them.
    static let files: (files: [VectorFile], problems: [String]) = {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".vec") }.sorted()
        } catch {
            return ([], ["cannot list \(folder.path): \(error)"])
        }
        var files: [VectorFile] = []
        var problems: [String] = []
        for name in names {
            do {
                files.append(VectorFile(name: name, text: try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)))
            } catch {
                problems.append("\(name): \(error)")
            }
        }
        return (files, problems)
    }()

    /// Each file with each side, for one test case per replay.
    static let replays: [(VectorFile, WireVector.Side)] = files.files.flatMap { file in
        WireVector.Side.allCases.map { (file, $0) }
    }
}

// Writes the wire-format test vectors (Tests/Vectors/blesend/README.md) from the real code:
//   swift run blesend-vectors [DIRECTORY]     (default: Tests/Vectors/blesend)
// Deterministic: running it twice writes the same bytes. Files in DIRECTORY that the catalogue
// does not produce (vectors written by hand or by another implementation) are left alone.
import Foundation
import WireVectors

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count <= 1, arguments.first?.hasPrefix("-") != true else {
    FileHandle.standardError.write(Data("usage: blesend-vectors [DIRECTORY]\n".utf8))
    exit(64)
}
let directory = URL(fileURLWithPath: arguments.first ?? "Tests/Vectors/blesend", isDirectory: true)

do {
    let outputs = try Generator.generate()
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    for output in outputs {
        try Data(output.text.utf8).write(to: directory.appendingPathComponent(output.fileName), options: .atomic)
        print("wrote \(directory.appendingPathComponent(output.fileName).path)")
    }
} catch {
    FileHandle.standardError.write(Data("blesend-vectors: error: \(error)\n".utf8))
    exit(1)
}

import Testing
import Session
import WireVectors

/// Every vector in Tests/Vectors/blesend, replayed against a fresh receiver and a fresh sender set
/// up from its header: each datagram they send must equal the log's, and the end must match
/// `expect:` (and, for the receiver, the files it holds). A file dropped into the folder runs here
/// with no change to the code.
@Suite struct WireVectorReplayTests {
    @Test func corpusLoadsAndHasSuccessesAndFailures() throws {
        #expect(VectorCorpus.files.problems.isEmpty, "\(VectorCorpus.files.problems)")
        let vectors = try VectorCorpus.files.files.map { try WireVector(parsing: $0.text) }
        #expect(vectors.contains { $0.expect == .success }, "no success vector in \(VectorCorpus.folder.path)")
        #expect(vectors.contains { $0.expect != .success }, "no failure vector in \(VectorCorpus.folder.path)")
    }

    @Test(arguments: VectorCorpus.replays)
    func replays(_ file: VectorFile, against side: WireVector.Side) throws {
        let vector = try WireVector(parsing: file.text)
        do {
            try Replay.run(vector, against: side)
        } catch {
            Issue.record("\(file.name): \(error)")
        }
    }

    @Test(arguments: VectorCorpus.files.files)
    func printsBackToTheSameText(_ file: VectorFile) throws {
        #expect(try WireVector(parsing: file.text).text == file.text, "\(file.name)")
    }
}

/// The generator and the committed files cannot drift apart: regenerating in memory gives the
/// same bytes (and so does a second run: the recording is deterministic).
@Suite struct WireVectorGeneratorTests {
    @Test func regeneratedVectorsEqualTheCommittedFiles() throws {
        let committed = Dictionary(uniqueKeysWithValues: VectorCorpus.files.files.map { ($0.name, $0.text) })
        let generated = try Generator.generate()
        #expect(!generated.isEmpty)
        for output in generated {
            guard let text = committed[output.fileName] else {
                Issue.record("\(output.fileName) is not in \(VectorCorpus.folder.path): run `swift run blesend-vectors`")
                continue
            }
            #expect(text == output.text, "\(output.fileName) differs from what the code records: run `swift run blesend-vectors` if the change is meant")
        }
    }

    @Test func generationIsDeterministic() throws {
        #expect(try Generator.generate() == Generator.generate())
    }
}

/// The first contact vector (docs/protocol.md §8.5): the sender replayed from it was told
/// `pending` and shows the code its comment gives, which another implementation must show too.
@Test func theFirstContactVectorShowsItsCode() throws {
    let file = try #require(VectorCorpus.files.files.first { $0.name == "first-contact.vec" })
    let vector = try WireVector(parsing: file.text)
    let codes = try Replay.run(vector, against: .sender).compactMap { event -> String? in
        if case .awaitingApproval(let code) = event { return code }
        return nil
    }
    #expect(codes == [firstContactVectorCode])
    #expect(vector.comments.joined(separator: " ").contains("code \(firstContactVectorCode)"))
}

/// The code `first-contact.vec` records (its comment says the same).
let firstContactVectorCode = "528 371"

/// Records every scenario of the catalogue and prints it: the contents of Tests/Vectors/blesend.
public enum Generator {
    public struct Output: Equatable, Sendable {
        /// `NAME.vec`.
        public var fileName: String
        public var text: String
    }

    /// Every vector of the catalogue, each checked by replaying its printed and re-parsed form
    /// against both sides before it is returned.
    public static func generate() throws(GenerationError) -> [Output] {
        let scenarios: [Scenario]
        do {
            scenarios = try Catalogue.scenarios()
        } catch {
            throw GenerationError(scenario: "catalogue", detail: error.description)
        }
        var outputs: [Output] = []
        for scenario in scenarios {
            outputs.append(Output(fileName: "\(scenario.name).vec", text: try generate(scenario)))
        }
        return outputs
    }

    static func generate(_ scenario: Scenario) throws(GenerationError) -> String {
        let vector: WireVector
        do {
            vector = try Recorder.record(scenario)
        } catch {
            throw GenerationError(scenario: scenario.name, detail: "\(error)")
        }
        let text = vector.text
        do {
            let reread = try WireVector(parsing: text)
            guard reread == vector else { throw GenerationError(scenario: scenario.name, detail: "the printed vector reads back differently") }
            for side in WireVector.Side.allCases { try Replay.run(reread, against: side) }
        } catch let error as GenerationError {
            throw error
        } catch {
            throw GenerationError(scenario: scenario.name, detail: "\(error)")
        }
        return text
    }
}

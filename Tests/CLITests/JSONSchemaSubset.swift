import EventSchema
import Foundation

/// docs/json-events.schema.json, as the shared checker (Sources/Tools/EventSchema) reads it.
enum JSONSchemaSubset {
    static var path: String {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/json-events.schema.json").path
    }

    static func load() throws -> EventSchema { try EventSchema(contentsOf: path) }
}

import Foundation
import LifelineProtocol

/// What a broker's state directory holds from its previous life, read once at start: the micro-app
/// stack (`sessions.json`), the boot state (`boot.json`), the application's lifecycle state
/// (`lifecycle.json`) and the durable journal's bytes.
struct SavedState {
    var sessions: JSONValue?
    var bootState: JSONValue?
    var lifecycle: JSONValue?
    var journal: [UInt8] = []

    /// Nothing saved: a broker without a state directory.
    init() {}

    /// Reads `directory` (creating it when missing); `log` hears of a file it ignores.
    /// - Throws: the error of creating the directory.
    init(directory: URL, log: (String) -> Void) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        func contents(_ file: String) -> [UInt8]? {
            FileManager.default.contents(atPath: directory.appendingPathComponent(file).path).map(Array.init)
        }
        if let data = contents("sessions.json") {
            sessions = try? JSONParser.parse(data)
            if sessions == nil { log("ignored \(directory.path)/sessions.json: it is not JSON") }
        }
        bootState = contents("boot.json").flatMap { try? JSONParser.parse($0) }
        lifecycle = contents("lifecycle.json").flatMap { try? JSONParser.parse($0) }
        journal = JournalFile.read(directory.appendingPathComponent("journal.log").path)
    }
}

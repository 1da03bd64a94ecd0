import Foundation
import Glibc
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
        // A journal that cannot be written (nor removed) would be replayed by the next start as if
        // nothing had happened since: its sequences given out twice.
        guard access(directory.path, W_OK | X_OK) == 0 else {
            throw StateDirectoryError(
                "the state directory \(directory.path) is not writable (\(String(cString: strerror(errno)))): the broker keeps its journal, stack and boot state there"
            )
        }
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

/// Why a state directory cannot be used.
struct StateDirectoryError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

import Foundation
import Glibc
import LifelineProtocol
import LifelineSupport

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

    /// Whether an earlier life of the broker left anything: it is started again, and its services
    /// are likely on their way back.
    var hadState: Bool { !journal.isEmpty || sessions != nil || bootState != nil || lifecycle != nil }

    /// Reads `directory` (creating it when missing); `log` hears of a file it ignores.
    /// - Throws: the error of creating the directory.
    init(directory: URL, log: (String) -> Void) throws {
        do { try Directories.create(directory.path, what: "the state directory") } catch {
            throw StateDirectoryError(error.description)
        }
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
        /// The JSON object in `file`, if any; one that is not (or not shaped as `problem` wants) is
        /// ignored, and logged.
        func document(_ file: String, problem: (JSONValue) -> String? = { _ in nil }) -> JSONValue? {
            guard let data = contents(file) else { return nil }
            guard let value = try? JSONParser.parse(data), case .object = value else {
                log("ignored \(directory.path)/\(file): it is not a JSON object")
                return nil
            }
            if let problem = problem(value) {
                log("ignored \(directory.path)/\(file): \(problem)")
                return nil
            }
            return value
        }
        sessions = document("sessions.json")
        bootState = document("boot.json") { value in
            value["runOnce"].map { $0.arrayValue == nil } == true ? "its 'runOnce' is not a list" : nil
        }
        lifecycle = document("lifecycle.json")
        journal = JournalFile.read(directory.appendingPathComponent("journal.log").path)
    }
}

/// Why a state directory cannot be used.
struct StateDirectoryError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

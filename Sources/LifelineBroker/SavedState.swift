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
    /// The directory's lock, held for the broker's life.
    var lock: FileLock?

    /// Nothing saved: a broker without a state directory.
    init() {}

    /// Whether an earlier life of the broker left anything: it is started again, and its services
    /// are likely on their way back.
    var hadState: Bool { !journal.isEmpty || sessions != nil || bootState != nil || lifecycle != nil }

    /// Reads `directory` (creating it when missing), taking its lock when `locking` (a group's member
    /// holds it for its whole life instead); `log` hears of a file it ignores.
    /// - Throws: ``StateDirectoryError``: the directory cannot be made or written, another broker
    ///   holds it, or a file there cannot be read.
    init(directory: URL, locking: Bool = true, log: (String) -> Void) throws {
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
        if locking { lock = try StateDirectoryLock.take(directory.path) }
        // A file that is there but cannot be read is not an empty history: starting afresh would
        // overwrite it (a journal's numbers given out again, run-once tasks run twice).
        func contents(_ file: String) throws -> [UInt8]? {
            let path = directory.appendingPathComponent(file).path
            var status = stat()
            guard stat(path, &status) == 0 else {
                if errno == ENOENT { return nil }
                throw StateDirectoryError.unreadable(path, String(cString: strerror(errno)))
            }
            guard status.st_mode & S_IFMT == S_IFREG else {
                throw StateDirectoryError.unreadable(path, "it is not a regular file")
            }
            guard let data = FileManager.default.contents(atPath: path) else {
                let reason = access(path, R_OK) == 0 ? "it cannot be read" : String(cString: strerror(errno))
                throw StateDirectoryError.unreadable(path, reason)
            }
            return Array(data)
        }
        /// The JSON object in `file`, if any; one that is not (or not shaped as `problem` wants) is
        /// ignored, and logged.
        func document(_ file: String, problem: (JSONValue) -> String? = { _ in nil }) throws -> JSONValue? {
            guard let data = try contents(file) else { return nil }
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
        sessions = try document("sessions.json")
        bootState = try document("boot.json") { value in
            value["runOnce"].map { $0.arrayValue == nil } == true ? "its 'runOnce' is not a list" : nil
        }
        lifecycle = try document("lifecycle.json")
        journal = try contents("journal.log") ?? []
    }
}

/// Why a state directory cannot be used.
struct StateDirectoryError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }

    static func unreadable(_ path: String, _ reason: String) -> StateDirectoryError {
        StateDirectoryError(
            "cannot read \(path) (\(reason)): the broker does not start without what it holds; make it readable, or move it away to start without it"
        )
    }
}

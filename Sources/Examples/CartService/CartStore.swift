import CartAPI
import Foundation
import LifelineSupport

/// Where carts are kept between activations: one JSON file per user in a directory shared by every
/// instance (`LIFELINE_CART_STORE`, default `$TMPDIR/lifeline-carts`), written whole and renamed
/// into place. With `LIFELINE_CART_JOURNAL` set, each activation's start and stop is appended
/// there too (`start USER PID NANOSECONDS`), for checking that no two ever overlap.
final class CartStore: Sendable {
    let directory: URL
    let journal: String?

    init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        let temporary = environment["TMPDIR"] ?? "/tmp"
        directory = URL(fileURLWithPath: environment["LIFELINE_CART_STORE"] ?? "\(temporary)/lifeline-carts")
        journal = environment["LIFELINE_CART_JOURNAL"]
    }

    /// The saved lines of `user`'s cart; none for a new cart.
    /// - Throws: when the file exists and cannot be read as a cart.
    func load(_ user: String) throws -> [CartLine] {
        let file = self.file(for: user)
        guard FileManager.default.fileExists(atPath: file.path) else { return [] }
        return try JSONDecoder().decode([CartLine].self, from: Data(contentsOf: file))
    }

    /// Saves `lines` as `user`'s cart.
    /// - Throws: when the directory or file cannot be written.
    func save(_ lines: [CartLine], for user: String) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try JSONEncoder().encode(lines).write(to: file(for: user), options: .atomic)
    }

    /// Appends `what` (start or stop) of `user`'s activation in this process to the journal: one
    /// `write` to a file opened with `O_APPEND`, so that lines of concurrent hooks and processes
    /// never overwrite each other.
    func record(_ what: String, _ user: String) {
        guard let journal else { return }
        let line =
            "\(what) \(user) \(ProcessInfo.processInfo.processIdentifier) \(SystemClock.monotonicNanoseconds())\n"
        let descriptor = open(journal, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        let bytes = Array(line.utf8)
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }

    private func file(for user: String) -> URL {
        // Keys may hold '/', ':' and '@': the file name spells each byte outside [A-Za-z0-9._-].
        let name = user.utf8.map { byte -> String in
            let character = Character(UnicodeScalar(byte))
            return character.isLetter || character.isNumber || "._-".contains(character)
                ? String(character) : String(format: "%%%02X", byte)
        }.joined()
        return directory.appendingPathComponent("\(name).json")
    }
}

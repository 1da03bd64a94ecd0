import Foundation
import Glibc

/// Key files in ZeroMQ's Z85 text form, as `lifeline keys new NAME` writes them:
///
/// - `NAME.key`, mode 0600: `public-key = …` and `secret-key = …` lines;
/// - `NAME.pub`: the `public-key = …` line, to hand to the broker's policy or to clients.
///
/// Lines starting with `#` are comments. A secret key file that anyone but its owner may read is
/// refused, as ssh refuses such a private key.
public enum KeyFile {
    /// What went wrong with a key file, said for a person.
    public struct Problem: Error, CustomStringConvertible {
        public let description: String
        public init(_ description: String) { self.description = description }
    }

    /// The public and secret keys of the key pair file at `path`.
    public static func readPair(_ path: String) throws(Problem) -> (publicKey: String?, secretKey: String) {
        // What the file is comes first: a public key file (NAME.pub, readable by all) given for a
        // pair is named as such, not as one with the wrong mode.
        let fields = try read(path)
        guard let secret = fields["secret-key"] else {
            throw Problem("\(path) has no 'secret-key = …' line: it is not a key pair file")
        }
        try checkPrivate(path, what: "secret key file")
        return (fields["public-key"], secret)
    }

    /// Refuses a file that anyone but its owner may read, or that cannot be read.
    private static func checkPrivate(_ path: String, what: String) throws(Problem) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw Problem("cannot read the \(what) \(path): \(String(cString: strerror(errno)))")
        }
        guard info.st_mode & 0o077 == 0 else {
            throw Problem(
                "the \(what) \(path) may be read by others than its owner (mode \(String(info.st_mode & 0o777, radix: 8))); run chmod 600 \(path)"
            )
        }
    }

    /// The text of a secret file (a bearer token, say), without surrounding white space: refused
    /// when anyone but its owner may read it, or when it is empty.
    package static func secret(_ path: String) throws(Problem) -> String {
        try checkPrivate(path, what: "secret file")
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Problem("cannot read the secret file \(path)")
        }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty, !text.contains(where: \.isNewline) else {
            throw Problem("the secret file \(path) must hold one line of text (the token)")
        }
        return text
    }

    /// A public key: `text` itself when it is 40 characters and no such file exists, else the
    /// `public-key` line of the file at `text` (a `.pub` or a key pair file).
    public static func publicKey(_ text: String) throws(Problem) -> String {
        if text.utf8.count == 40 && !FileManager.default.fileExists(atPath: text) { return text }
        guard let key = try read(text)["public-key"] else {
            throw Problem("\(text) has no 'public-key = …' line")
        }
        return key
    }

    /// Writes `NAME.key` (mode 0600) and `NAME.pub` in `directory`; refuses to overwrite.
    public static func write(
        name: String, publicKey: String, secretKey: String, in directory: String
    ) throws(Problem) -> (secret: String, public: String) {
        let secretPath = (directory as NSString).appendingPathComponent("\(name).key")
        let publicPath = (directory as NSString).appendingPathComponent("\(name).pub")
        for path in [secretPath, publicPath] where FileManager.default.fileExists(atPath: path) {
            throw Problem("\(path) exists already; remove it first to make a new key pair")
        }
        let secretText = """
            # Lifeline CURVE key pair '\(name)': keep this file secret (mode 0600)
            public-key = \(publicKey)
            secret-key = \(secretKey)

            """
        let publicText = """
            # Lifeline CURVE public key '\(name)'
            public-key = \(publicKey)

            """
        try create(secretPath, secretText, mode: 0o600)
        try create(publicPath, publicText, mode: 0o644)
        return (secretPath, publicPath)
    }

    private static func create(_ path: String, _ text: String, mode: mode_t) throws(Problem) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else {
            throw Problem("cannot create \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        guard written == bytes.count, fchmod(descriptor, mode) == 0 else {
            throw Problem("cannot write \(path): \(String(cString: strerror(errno)))")
        }
    }

    private static func read(_ path: String) throws(Problem) -> [String: String] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Problem("cannot read the key file \(path)")
        }
        var fields: [String: String] = [:]
        for (number, line) in String(decoding: data, as: UTF8.self).split(separator: "\n").enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            let parts = trimmed.split(separator: "=", maxSplits: 1).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard parts.count == 2, ["public-key", "secret-key"].contains(parts[0]), parts[1].utf8.count == 40
            else {
                throw Problem(
                    "\(path):\(number + 1): expected 'public-key = KEY' or 'secret-key = KEY' (40 Z85 characters)"
                )
            }
            fields[parts[0]] = parts[1]
        }
        return fields
    }
}

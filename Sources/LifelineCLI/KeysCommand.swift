import Foundation
import Lifeline
import LifelineProtocol
import LifelineSupport
import ZeroMQ

/// `lifeline keys new NAME` and `lifeline keys show FILE`.
enum KeysCommand: CLICommand {
    static let name = "keys"
    static let summary = "make a CURVE key pair (keys new NAME) or show a key file's public key"
    static let usage = """
        usage: lifeline keys new NAME [NAME…] [--dir DIR]
               lifeline keys show FILE

        new:  writes DIR/NAME.key (the key pair, mode 0600: keep it secret) and DIR/NAME.pub (the
              public key, for the broker's policy, clients' --broker-key or a group's --group-keys)
              for each NAME. DIR defaults to the current directory; existing files are never
              overwritten. A broker group's keys: lifeline keys new a b c --dir keys.
        show: prints the public key of a .key or .pub file.
        """
    static let directory = CommandLineOption.value(
        "--dir", "DIR", help: "where 'keys new' writes NAME.key and NAME.pub (default: the current directory)"
    )
    static let options = [directory]

    static func run(_ arguments: inout CommandLineArguments) throws -> Int32 {
        let directory = try arguments.option(Self.directory) ?? "."
        guard let verb = arguments.positional() else {
            throw UsageError("keys needs 'new NAME' or 'show FILE'")
        }
        switch verb {
        case "new":
            var names: [String] = []
            while let name = arguments.positional() { names.append(name) }
            guard !names.isEmpty else { throw UsageError("keys new needs a NAME") }
            try arguments.finish()
            for name in names {
                guard !name.isEmpty, name.utf8.count <= 64,
                    name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) })
                else {
                    throw UsageError(
                        "a key name is 1–64 letters, digits, '.', '_' or '-', not '\(name.escapedForLog)'")
                }
            }
            guard Set(names).count == names.count else { throw UsageError("keys new: a NAME is given twice") }
            guard CurveKeyPair.isAvailable else {
                throw LifelineError(.internalError, "this libzmq was built without CURVE")
            }
            do { try Directories.create(directory, what: "the key directory", mode: 0o700) } catch {
                throw LifelineError(.badRequest, error.description)
            }
            for name in names {
                let pair = try CurveKeyPair.generate()
                do {
                    let paths = try KeyFile.write(
                        name: name, publicKey: pair.publicKey, secretKey: pair.secretKey, in: directory)
                    Console.out("wrote \(paths.secret) (secret, mode 0600) and \(paths.public)")
                    Console.out("public key: \(pair.publicKey)")
                } catch {
                    throw LifelineError(.badRequest, error.description)
                }
            }
        case "show":
            guard let path = arguments.positional() else { throw UsageError("keys show needs a FILE") }
            try arguments.finish()
            do {
                Console.out(try KeyFile.publicKey(path))
            } catch {
                throw LifelineError(.badRequest, error.description)
            }
        default:
            throw UsageError("unknown keys command '\(verb.escapedForLog)'; commands: new, show")
        }
        return 0
    }
}

import Foundation
import Lifeline
import LifelineBroker
import LifelineProtocol
import LifelineSupport

/// `lifeline policy check FILE [--key NAME] [--can ACTION SUBJECT]`.
enum PolicyCommand: CLICommand {
    static let name = "policy"
    static let summary = "validate a broker policy file and explain what each key may do"
    static let usage = """
        usage: lifeline policy check FILE [--key NAME]

        Reads a policy (the broker's --policy) and says what is wrong with it, naming the key and
        field; else lists, for each key (or only NAME), what it may register, publish, subscribe
        to and call, and whether it may use the administrative commands. Exit 0 when valid, 1 not.
        """
    static let key = CommandLineOption.value("--key", "NAME", help: "list only what key NAME may do")
    static let options = [key]

    static func run(_ arguments: inout CommandLineArguments) throws -> Int32 {
        let only = try arguments.option(Self.key)
        guard arguments.positional() == "check" else { throw UsageError("usage: lifeline policy check FILE") }
        guard let path = arguments.positional() else { throw UsageError("policy check needs a FILE") }
        try arguments.finish()
        let policy: AccessPolicy
        do {
            policy = try AccessPolicy(path: path)
        } catch {
            throw LifelineError(.badRequest, error.message)
        }
        let names = only.map { [$0] } ?? policy.grants.keys.sorted()
        if let only, policy.grants[only] == nil {
            throw LifelineError(
                .notFound,
                "no key '\(only)' in \(path); keys: \(policy.grants.keys.sorted().joined(separator: ", "))")
        }
        Console.out("\(path): valid, \(policy.grants.count) key(s) on the allow-list")
        for name in names {
            for line in policy.explain(name) { Console.out(line) }
        }
        return 0
    }
}

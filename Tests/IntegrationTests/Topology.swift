import Foundation
import Lifeline
import LifelineProtocol

/// A broker on ephemeral loopback ports, started as a real process and waited for with its READY line.
final class BrokerProcess: @unchecked Sendable {
    let process: ChildProcess
    let control: String
    let bus: String

    /// Starts `lifeline broker` with `arguments` (default: wildcard tcp ports).
    init(control: String = "tcp://127.0.0.1:*", bus: String = "tcp://127.0.0.1:*", _ extra: [String] = [])
        async throws
    {
        process = try ChildProcess("lifeline", ["broker", "--control", control, "--bus", bus] + extra)
        let ready = try await process.waitForLine(startingWith: "READY ")
        let fields = Dictionary(
            uniqueKeysWithValues: ready.dropFirst(6).split(separator: " ").map { field -> (String, String) in
                let parts = field.split(separator: "=", maxSplits: 1)
                return (String(parts[0]), String(parts[1]))
            })
        self.control = fields["control"] ?? ""
        self.bus = fields["bus"] ?? ""
    }

    /// Starts a service executable against this broker and waits for its READY line.
    func service(_ executable: String, _ arguments: [String] = []) async throws -> ChildProcess {
        let child = try ChildProcess(executable, ["--broker", control] + arguments)
        try await child.waitForLine(startingWith: "READY service=")
        return child
    }

    /// Runs the CLI against this broker to completion.
    func cli(_ arguments: [String], seconds: Double = 20) async throws -> CLIResult {
        try await CLIResult.run(arguments, environment: ["LIFELINE_BROKER": control], seconds: seconds)
    }
}

/// The outcome of one `lifeline` invocation.
struct CLIResult {
    let status: Int32
    let stdout: [String]
    let stderr: [String]

    static func run(_ arguments: [String], environment: [String: String] = [:], seconds: Double = 20)
        async throws -> CLIResult
    {
        let child = try ChildProcess("lifeline", arguments, environment: environment)
        let status = try await child.waitForExit(seconds: seconds)
        await child.waitForOutputToEnd()
        return CLIResult(status: status, stdout: child.lines(.stdout), stderr: child.lines(.stderr))
    }

    var output: String { stdout.joined(separator: "\n") }
    var errors: String { stderr.joined(separator: "\n") }
}

import Foundation
import Lifeline
import LifelineBroker
import LifelineProtocol
import LifelineSupport

/// `lifeline scale`: changes how many processes of a service `lifeline up` runs.
enum ScaleCommand: CLICommand {
    static let name = "scale"
    static let summary = "run N processes (instances) of a service that 'lifeline up' supervises"
    static let usage = """
        usage: lifeline scale SERVICE N [--run-dir DIR]

        Asks the supervisor of DIR (default run/) to run N processes of SERVICE (1...64) from now
        on: the missing ones start (NAME@2, NAME@3, …) and the command returns once each has
        registered; extra ones stop, the last started first. The service's other processes are
        not touched, and the service must be replicable. Until the next 'lifeline up', which
        starts the topology's "replicas" again. Prints what changed; exit 1 when it could not.
        """
    static let runDirectory = CommandLineOption.value(
        "--run-dir", "DIR", help: "the supervisor's run directory (default run/)")
    static let options = [runDirectory]
    static let requestFile = "scale.request"
    static let replyFile = "scale.reply"
    /// Held (flock) while a request is out, so that two `lifeline scale` wait for each other.
    static let lockFile = "scale.lock"

    static func run(_ arguments: inout CommandLineArguments) throws -> Int32 {
        let runDirectory = URL(fileURLWithPath: try arguments.path(Self.runDirectory) ?? "run")
        let positional = arguments.remainingPositionals()
        try arguments.finish()
        guard positional.count == 2 else {
            throw UsageError("give a service and a number: lifeline scale pay 3")
        }
        guard let count = Int(positional[1]), (1...Topology.maximumReplicas).contains(count) else {
            throw UsageError(
                "N must be a number within 1...\(Topology.maximumReplicas), not '\(positional[1])'")
        }
        guard let pid = DownCommand.runningSupervisor(runDirectory.appendingPathComponent("up.pid")) else {
            throw LifelineError(
                .unavailable, "nothing is up in \(runDirectory.path); start it with 'lifeline up'")
        }
        // One request at a time: the run directory holds one request and one reply.
        let lock = open(runDirectory.appendingPathComponent(lockFile).path, O_CREAT | O_RDWR, 0o600)
        guard lock >= 0 else {
            throw LifelineError(
                .internalError,
                "cannot open \(runDirectory.path)/\(lockFile): \(String(cString: strerror(errno)))")
        }
        defer { close(lock) }
        while flock(lock, LOCK_EX) != 0 && errno == EINTR {}
        let id = UUID().uuidString
        let request: JSONValue = [
            "id": .string(id), "service": .string(positional[0]), "replicas": .int(Int64(count)),
        ]
        try Data(JSONWriter.encode(request)).write(
            to: runDirectory.appendingPathComponent(requestFile), options: .atomic)
        kill(pid, SIGUSR1)
        let deadline = SystemClock.monotonicNanoseconds() + 90_000_000_000
        let replyPath = runDirectory.appendingPathComponent(replyFile).path
        while SystemClock.monotonicNanoseconds() < deadline {
            if let data = FileManager.default.contents(atPath: replyPath),
                let reply = try? JSONParser.parse(Array(data)), reply["id"]?.stringValue == id
            {
                let message = reply["message"]?.stringValue ?? ""
                if reply["ok"]?.boolValue == true {
                    Console.out(message)
                    return 0
                }
                Console.error("lifeline scale: \(message)")
                return 1
            }
            usleep(20_000)
        }
        throw LifelineError(
            .timeout,
            "the supervisor (pid \(pid)) did not answer within 90 s; see \(runDirectory.path)/up.log")
    }
}

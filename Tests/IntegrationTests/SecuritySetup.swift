import Foundation
import Lifeline
import LifelineCLI
import LifelineProtocol
import LifelineSupport
import ZeroMQ

/// Key pairs and a policy file in a temporary directory, for brokers that run with CURVE.
struct SecuritySetup {
    let directory: URL

    init(keys names: [String]) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lifeline-keys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for name in ["broker"] + names {
            let pair = try CurveKeyPair.generate()
            _ = try KeyFile.write(
                name: name, publicKey: pair.publicKey, secretKey: pair.secretKey, in: directory.path)
        }
    }

    func path(_ file: String) -> String { directory.appendingPathComponent(file).path }
    var policyPath: String { path("policy.json") }

    /// Writes the policy: each key with its grant (`publicKeyFile` is filled in).
    func writePolicy(_ grants: [String: JSONValue]) throws {
        var keys: [String: JSONValue] = [:]
        for (name, grant) in grants {
            guard case .object(var members) = grant else { continue }
            if members["publicKeyFile"] == nil && members["publicKey"] == nil {
                members["publicKeyFile"] = .string("\(name).pub")
            }
            keys[name] = .object(members)
        }
        try Data(JSONWriter.encode(["keys": .object(keys)])).write(to: URL(fileURLWithPath: policyPath))
    }

    /// Writes the policy and has `broker` read it again (SIGHUP); returns once it says it did.
    func reload(_ grants: [String: JSONValue], _ broker: BrokerProcess) async throws {
        let before = broker.process.lines(.stderr).filter { $0.contains("reloaded ") }.count
        try writePolicy(grants)
        broker.process.kill(SIGHUP)
        let deadline = ContinuousClock.now + .seconds(10)
        while broker.process.lines(.stderr).filter({ $0.contains("reloaded ") }).count == before {
            guard ContinuousClock.now < deadline else { throw HarnessError("the broker did not reload") }
            try await Task.sleep(for: .milliseconds(10))  // polling the log with a deadline
        }
    }

    /// `lifeline broker` arguments for CURVE with this policy.
    var brokerArguments: [String] { ["--key", path("broker.key"), "--policy", policyPath] }

    /// The credentials of key `name` for this broker.
    func credentials(_ name: String) throws -> LifelineClient.Credentials {
        try LifelineClient.Credentials(keyFile: path("\(name).key"), brokerKey: path("broker.pub"))
    }

    /// A service's (or the CLI's) arguments for key `name`.
    func keyArguments(_ name: String) -> [String] {
        ["--key", path("\(name).key"), "--broker-key", path("broker.pub")]
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }
}

/// A ``BlockingClient``, made in a synchronous function: its initializer is unavailable from async
/// code (it blocks its thread), and these tests use it on purpose from their own tasks.
func blockingClient(broker: String, credentials: LifelineClient.Credentials? = nil) throws -> BlockingClient {
    try BlockingClient(broker: broker, credentials: credentials)
}

import Foundation

/// What the runtime reads from the process environment.
package enum Environment {
    /// `LIFELINE_BROKER`, else the default control endpoint.
    static var brokerEndpoint: String {
        ProcessInfo.processInfo.environment["LIFELINE_BROKER"].flatMap { $0.isEmpty ? nil : $0 }
            ?? defaultControlEndpoint
    }

    /// The broker's default control endpoint (loopback).
    static let defaultControlEndpoint = "tcp://127.0.0.1:7200"

    /// A token unique to this process run.
    package static func uniqueToken() -> String { UUID().uuidString.lowercased() }

    /// This host's name.
    static var hostName: String { ProcessInfo.processInfo.hostName }

    /// The value of an environment variable.
    static func variable(_ name: String) -> String? { ProcessInfo.processInfo.environment[name] }

    /// This process's id.
    static var processID: Int { Int(ProcessInfo.processInfo.processIdentifier) }
}

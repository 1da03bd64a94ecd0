import LifelineProtocol

/// A service's view of the runtime, handed to every handler: its name, and a client that shares the
/// service's connection to the broker.
public struct ServiceContext: Sendable {
    /// The service's registered name.
    public let serviceName: String
    /// Publish, look up and call other services through the broker.
    public let client: LifelineClient

    /// Writes a timestamped line to standard error under the service's name.
    public func log(_ message: String) { Console.log(serviceName, message) }
}

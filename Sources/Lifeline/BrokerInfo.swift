import LifelineProtocol

/// What HELLO says about a broker.
public struct BrokerInfo: Sendable, Equatable {
    public var bus: String
    public var epoch: UInt64
    public var sequence: UInt64
    public var heartbeat: HeartbeatSettings
    public var pid: Int
    public var host: String
    public var version: String

    public init(json: JSONValue) throws {
        guard let bus = json["bus"]?.stringValue, let epoch = json["epoch"]?.intValue else {
            throw LifelineError(.badRequest, "the broker's HELLO reply lacks 'bus' or 'epoch'")
        }
        self.bus = bus
        self.epoch = UInt64(epoch)
        self.sequence = UInt64(json["sequence"]?.intValue ?? 0)
        self.heartbeat = (try? HeartbeatSettings(json: json["heartbeat"] ?? .null)) ?? .standard
        self.pid = Int(json["broker"]?["pid"]?.intValue ?? 0)
        self.host = json["broker"]?["host"]?.stringValue ?? ""
        self.version = json["broker"]?["version"]?.stringValue ?? ""
    }
}

/// The broker's answer to PUBLISH.
public struct PublishReceipt: Sendable, Equatable {
    public var event: EventName
    public var sequence: UInt64
    public var epoch: UInt64
    /// How many registered services subscribe to the event.
    public var subscribers: Int

    public init(json: JSONValue) {
        event = EventName(rawValue: json["event"]?.stringValue ?? "")
        sequence = UInt64(json["sequence"]?.intValue ?? 0)
        epoch = UInt64(json["epoch"]?.intValue ?? 0)
        subscribers = Int(json["subscribers"]?.intValue ?? 0)
    }
}

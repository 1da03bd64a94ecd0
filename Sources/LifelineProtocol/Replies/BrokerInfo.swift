/// The HELLO reply: where the bus is, the broker's rules and where it stands.
package struct BrokerInfo: Sendable, Equatable {
    /// What the broker's journal holds and keeps.
    public struct Journal: Sendable, Equatable {
        public var events: Int
        public var firstSequence: UInt64
        public var capacity: Int
        public var maximumAgeMilliseconds: Int

        public init(events: Int, firstSequence: UInt64, capacity: Int, maximumAgeMilliseconds: Int) {
            self.events = events
            self.firstSequence = firstSequence
            self.capacity = capacity
            self.maximumAgeMilliseconds = maximumAgeMilliseconds
        }
    }

    /// The bus endpoint to connect to (the first of ``buses``).
    public var bus: String
    public var buses: [String]
    public var epoch: UInt64
    public var sequence: UInt64
    public var lifecycle: LifecycleState
    public var heartbeat: HeartbeatSettings
    public var maximumMessageBytes: Int
    public var journal: Journal
    public var pid: Int
    public var host: String
    public var version: String

    public init(
        buses: [String], epoch: UInt64, sequence: UInt64, lifecycle: LifecycleState,
        heartbeat: HeartbeatSettings,
        maximumMessageBytes: Int, journal: Journal, pid: Int, host: String, version: String
    ) {
        self.bus = buses.first ?? ""
        self.buses = buses
        self.epoch = epoch
        self.sequence = sequence
        self.lifecycle = lifecycle
        self.heartbeat = heartbeat
        self.maximumMessageBytes = maximumMessageBytes
        self.journal = journal
        self.pid = pid
        self.host = host
        self.version = version
    }

    public init(json: JSONValue) throws(ProtocolError) {
        guard let bus = json["bus"]?.stringValue, let epoch = json["epoch"]?.intValue else {
            throw ProtocolError(.badRequest, "the broker's HELLO reply lacks 'bus' or 'epoch'")
        }
        self.bus = bus
        self.buses = (json["buses"]?.arrayValue ?? [.string(bus)]).compactMap(\.stringValue)
        self.epoch = UInt64(bitPattern: epoch)
        self.sequence = UInt64(max(0, json["sequence"]?.intValue ?? 0))
        self.lifecycle = json["lifecycle"]?.stringValue.flatMap(LifecycleState.init(rawValue:)) ?? .notRunning
        self.heartbeat = (try? HeartbeatSettings(json: json["heartbeat"] ?? .null)) ?? .standard
        self.maximumMessageBytes = Int(json["maxMessageBytes"]?.intValue ?? 0)
        let journal = json["journal"]
        self.journal = Journal(
            events: Int(journal?["events"]?.intValue ?? 0),
            firstSequence: UInt64(max(0, journal?["firstSequence"]?.intValue ?? 0)),
            capacity: Int(journal?["capacity"]?.intValue ?? 0),
            maximumAgeMilliseconds: Int(journal?["maxAgeMs"]?.intValue ?? 0))
        self.pid = Int(json["broker"]?["pid"]?.intValue ?? 0)
        self.host = json["broker"]?["host"]?.stringValue ?? ""
        self.version = json["broker"]?["version"]?.stringValue ?? ""
    }

    public var json: JSONValue {
        [
            "protocol": .string(ProtocolID.control), "bus": .string(bus),
            "buses": .array(buses.map { .string($0) }),
            "epoch": .int(Int64(epoch)), "sequence": .int(Int64(sequence)), "heartbeat": heartbeat.json,
            "maxMessageBytes": .int(Int64(maximumMessageBytes)), "lifecycle": .string(lifecycle.rawValue),
            "journal": [
                "events": .int(Int64(journal.events)), "firstSequence": .int(Int64(journal.firstSequence)),
                "capacity": .int(Int64(journal.capacity)),
                "maxAgeMs": .int(Int64(journal.maximumAgeMilliseconds)),
            ],
            "broker": ["pid": .int(Int64(pid)), "host": .string(host), "version": .string(version)],
        ]
    }
}

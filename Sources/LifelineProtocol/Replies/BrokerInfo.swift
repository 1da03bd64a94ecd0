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
    /// Requests the broker has handled since it started.
    public var requestsHandled: UInt64 = 0
    /// Whether its sockets take CURVE clients only.
    public var secure = false

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
}

extension BrokerInfo: WireRecord {
    /// Who the broker is: the HELLO reply's `broker` member.
    package struct Process: WireRecord, Equatable {
        var pid = 0
        var host = ""
        var version = ""

        package static var blank: Process { Process() }
        package static var recordName: String { "the HELLO reply's broker" }

        package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure)
        {
            try visitor.field("host", &host, default: "")
            try visitor.field("pid", &pid, in: 0...Int.max, default: 0)
            try visitor.field("version", &version, default: "")
        }
    }

    package static var blank: BrokerInfo {
        BrokerInfo(
            buses: [], epoch: 0, sequence: 0, lifecycle: .notRunning, heartbeat: .standard,
            maximumMessageBytes: 0,
            journal: Journal(events: 0, firstSequence: 0, capacity: 0, maximumAgeMilliseconds: 0), pid: 0,
            host: "",
            version: "")
    }
    package static var recordName: String { "the HELLO reply" }

    package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        var process = Process(pid: pid, host: host, version: version)
        try visitor.field("broker", record: &process, default: Process())
        (pid, host, version) = (process.pid, process.host, process.version)
        try visitor.field("bus", &bus)
        try visitor.field("buses", list: &buses)
        if buses.isEmpty { buses = [bus] }
        try visitor.field("curve", always: &secure, default: false)
        try visitor.field("epoch", &epoch, bitPattern: true)
        try visitor.field("heartbeat", record: &heartbeat, default: .standard)
        try visitor.field("journal", record: &journal, default: Self.blank.journal)
        try visitor.field("lifecycle", &lifecycle, default: .notRunning)
        try visitor.field("maxMessageBytes", &maximumMessageBytes, in: 0...Int.max, default: 0)
        var protocolName: String? = ProtocolID.control
        try visitor.field("protocol", tolerant: &protocolName)
        try visitor.field("requests", &requestsHandled, default: 0, bitPattern: false)
        try visitor.field("sequence", &sequence, default: 0, bitPattern: false)
    }
}

extension BrokerInfo.Journal: WireRecord {
    package static var blank: Self {
        Self(events: 0, firstSequence: 0, capacity: 0, maximumAgeMilliseconds: 0)
    }
    package static var recordName: String { "the HELLO reply's journal" }

    package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        try visitor.field("capacity", &capacity, in: 0...Int.max, default: 0)
        try visitor.field("events", &events, in: 0...Int.max, default: 0)
        try visitor.field("firstSequence", &firstSequence, default: 0, bitPattern: false)
        try visitor.field("maxAgeMs", &maximumAgeMilliseconds, in: 0...Int.max, default: 0)
    }
}

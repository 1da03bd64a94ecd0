/// The STATS reply (docs/PROTOCOL.md §4), declared once: broker-wide counters, published events by
/// name, and each service's figures and calls by method, as the broker measures them.
package struct StatsReport: WireRecord, Equatable {
    package var broker: Broker
    package var events: [EventName: Int]
    /// A broker group's view (members, term, roles), when the broker leads one.
    package var group: Group?
    package var services: [Name: Service]

    package init(broker: Broker, events: [EventName: Int], services: [Name: Service], group: Group? = nil) {
        self.broker = broker
        self.events = events
        self.services = services
        self.group = group
    }

    package static var blank: Self { Self(broker: .blank, events: [:], services: [:]) }
    package static var recordName: String { "the STATS reply" }

    package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        try visitor.field("broker", record: &broker)
        try visitor.field("events", &events, in: 0...Int.max)
        try visitor.field("group", record: &group)
        try visitor.field("services", records: &services)
    }

    /// A service's or a method's name, as a key of the report.
    package struct Name: RawRepresentable, Hashable, Sendable {
        package let rawValue: String

        package init(rawValue: String) { self.rawValue = rawValue }
    }

    /// The broker's counters since it started.
    package struct Broker: WireRecord, Equatable {
        package var acknowledgements: Int64 = 0
        package var curve = false
        package var delivered: Int64 = 0
        package var dispatches: Int64 = 0
        package var epoch: UInt64 = 0
        package var journal = Journal()
        /// The upper bounds of the latency buckets, in milliseconds.
        package var latencyBoundsMilliseconds: [Double] = []
        package var peers: Int64 = 0
        package var published: Int64 = 0
        package var requests: Int64 = 0
        package var sequence: Int64 = 0
        package var services: Int64 = 0
        package var uptimeMilliseconds: Int64 = 0

        package init() {}

        package static var blank: Self { Self() }
        package static var recordName: String { "the STATS broker figures" }

        package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure)
        {
            try visitor.field("acks", &acknowledgements, default: 0)
            try visitor.field("curve", always: &curve, default: false)
            try visitor.field("delivered", &delivered, default: 0)
            try visitor.field("dispatches", &dispatches, default: 0)
            try visitor.field("epoch", &epoch, default: 0, bitPattern: true)
            try visitor.field("journal", record: &journal, default: Journal())
            try visitor.field("latencyBoundsMs", numbers: &latencyBoundsMilliseconds)
            try visitor.field("peers", &peers, default: 0)
            try visitor.field("published", &published, default: 0)
            try visitor.field("requests", &requests, default: 0)
            try visitor.field("sequence", &sequence, default: 0)
            try visitor.field("services", &services, default: 0)
            try visitor.field("uptimeMs", &uptimeMilliseconds, default: 0)
        }
    }

    /// What the broker's journal holds.
    package struct Journal: WireRecord, Equatable {
        package var bytes: Int64 = 0
        package var events: Int64 = 0

        package init() {}

        package static var blank: Self { Self() }
        package static var recordName: String { "the STATS journal figures" }

        package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure)
        {
            try visitor.field("bytes", &bytes, default: 0)
            try visitor.field("events", &events, default: 0)
        }
    }

    /// A service's figures: registered or only remembered by its calls, what its handlers dropped,
    /// queued and handled, its calls by method, and its instances when it is replicable.
    package struct Service: WireRecord, Equatable {
        package var dispatchSteps: Int64 = 0
        package var dropped: Int64 = 0
        /// Events whose handler threw (counted in `handled` too).
        package var failed: Int64 = 0
        package var handled: [Name: Int] = [:]
        package var instances: [Instance]?
        package var methods: [Name: Method] = [:]
        package var pid: Int64?
        package var queued: Int64 = 0
        package var registered = false
        /// A shared event's queue figures, for a service that takes one.
        package var shared: Shared?
        package var undecodable: Int64 = 0

        package init() {}

        package static var blank: Self { Self() }
        package static var recordName: String { "a service's STATS figures" }

        package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure)
        {
            try visitor.field("dispatchSteps", &dispatchSteps, default: 0)
            try visitor.field("dropped", &dropped, default: 0)
            try visitor.field("failed", &failed, default: 0)
            try visitor.field("handled", &handled, in: 0...Int.max)
            try visitor.field("instances", optionalRecords: &instances)
            try visitor.field("methods", records: &methods)
            try visitor.field("pid", nullable: &pid)
            try visitor.field("queued", &queued, default: 0)
            try visitor.field("registered", always: &registered, default: false)
            try visitor.field("shared", record: &shared)
            try visitor.field("undecodable", &undecodable, default: 0)
        }
    }

    /// One instance of a replicable service.
    package struct Instance: WireRecord, Equatable {
        package var answered: Int64 = 0
        package var connected = false
        package var dropped: Int64 = 0
        package var host = ""
        package var inFlight: Int64 = 0
        package var instance = ""
        package var pid: Int64 = 0
        package var queued: Int64 = 0

        package init() {}

        package static var blank: Self { Self() }
        package static var recordName: String { "an instance's STATS figures" }

        package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure)
        {
            try visitor.field("answered", &answered, default: 0)
            try visitor.field("connected", always: &connected, default: false)
            try visitor.field("dropped", &dropped, default: 0)
            try visitor.field("host", &host)
            try visitor.field("inFlight", &inFlight, default: 0)
            try visitor.field("instance", &instance)
            try visitor.field("pid", &pid, default: 0)
            try visitor.field("queued", &queued, default: 0)
        }
    }

    /// A method's calls: how many, how many failed or timed out, and their latency as the broker
    /// measured it (mean and quantiles in milliseconds, null before any call; a count per bucket).
    package struct Method: WireRecord, Equatable {
        package var buckets: [Int64] = []
        package var errors: Int64 = 0
        package var meanMilliseconds: Double?
        package var p50Milliseconds: Double?
        package var p99Milliseconds: Double?
        package var requests: Int64 = 0
        package var timeouts: Int64 = 0

        package init() {}

        package static var blank: Self { Self() }
        package static var recordName: String { "a method's STATS figures" }

        package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure)
        {
            try visitor.field("buckets", integers: &buckets)
            try visitor.field("errors", &errors, default: 0)
            try visitor.field("meanMs", nullable: &meanMilliseconds)
            try visitor.field("p50Ms", nullable: &p50Milliseconds)
            try visitor.field("p99Ms", nullable: &p99Milliseconds)
            try visitor.field("requests", &requests, default: 0)
            try visitor.field("timeouts", &timeouts, default: 0)
        }
    }

    /// A shared event's queue: events waiting, in flight, sent, sent again, dropped.
    package struct Shared: WireRecord, Equatable {
        package var dropped: Int64 = 0
        package var inFlight: Int64 = 0
        package var redelivered: Int64 = 0
        package var sent: Int64 = 0
        package var waiting: Int64 = 0

        package init() {}

        package static var blank: Self { Self() }
        package static var recordName: String { "a shared event's STATS figures" }

        package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure)
        {
            try visitor.field("dropped", &dropped, default: 0)
            try visitor.field("inFlight", &inFlight, default: 0)
            try visitor.field("redelivered", &redelivered, default: 0)
            try visitor.field("sent", &sent, default: 0)
            try visitor.field("waiting", &waiting, default: 0)
        }
    }

    /// A broker group as its leader sees it: its term, the log's commit and last index, each
    /// member's role and how far it is behind, and the etcd lease that lets it lead.
    package struct Group: WireRecord, Equatable {
        package var commit: Int64 = 0
        package var etcd = Etcd()
        package var last: Int64 = 0
        package var member = ""
        package var members: [Member] = []
        package var name = ""
        package var term: UInt64 = 0

        package init() {}

        package static var blank: Self { Self() }
        package static var recordName: String { "the STATS group view" }

        package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure)
        {
            try visitor.field("commit", &commit, default: 0)
            try visitor.field("etcd", record: &etcd, default: Etcd())
            try visitor.field("last", &last, default: 0)
            try visitor.field("member", &member)
            try visitor.field("members", records: &members)
            try visitor.field("name", &name)
            try visitor.field("term", &term, default: 0, bitPattern: true)
        }

        /// One member: `leader`, `standby` (with its log index, lag and when it was last heard) or
        /// `unreached`.
        package struct Member: WireRecord, Equatable {
            package var heardMillisecondsAgo: Int?
            package var index: Int?
            package var lag: Int?
            package var member = ""
            package var role = ""

            package init() {}

            package static var blank: Self { Self() }
            package static var recordName: String { "a member of the STATS group view" }

            package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor)
                throws(Visitor.Failure)
            {
                try visitor.field("heardMsAgo", &heardMillisecondsAgo, in: 0...Int.max)
                try visitor.field("index", &index, in: 0...Int.max)
                try visitor.field("lag", &lag, in: 0...Int.max)
                try visitor.field("member", &member)
                try visitor.field("role", &role)
            }
        }

        /// The etcd cluster the group leads through, and the leader's lease on it.
        package struct Etcd: WireRecord, Equatable {
            package var endpoints: [String] = []
            package var healthy = false
            package var leaseValidMilliseconds: Int64 = 0

            package init() {}

            package static var blank: Self { Self() }
            package static var recordName: String { "the STATS group's etcd" }

            package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor)
                throws(Visitor.Failure)
            {
                try visitor.field("endpoints", list: &endpoints)
                try visitor.field("healthy", always: &healthy, default: false)
                try visitor.field("leaseValidMs", &leaseValidMilliseconds, default: 0)
            }
        }
    }
}

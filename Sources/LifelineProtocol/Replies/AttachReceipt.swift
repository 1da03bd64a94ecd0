/// The ATTACH reply: the subscriber's marker reached the bus; events published from now on reach it.
package struct AttachReceipt: Sendable, Equatable {
    public var bus: String
    public var epoch: UInt64
    public var sequence: UInt64
    public var lifecycle: LifecycleState
    /// Why bus subscriptions sent before the marker were refused, one sentence each (nil: none was).
    package var refused: [String]?

    public init(bus: String, epoch: UInt64, sequence: UInt64, lifecycle: LifecycleState) {
        self.bus = bus
        self.epoch = epoch
        self.sequence = sequence
        self.lifecycle = lifecycle
    }
}

extension AttachReceipt: WireRecord {
    package static var blank: AttachReceipt {
        AttachReceipt(bus: "", epoch: 0, sequence: 0, lifecycle: .notRunning)
    }
    package static var recordName: String { "the ATTACH reply" }

    package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        try visitor.field("bus", &bus, default: "")
        try visitor.field("epoch", &epoch, default: 0, bitPattern: true)
        try visitor.field("lifecycle", &lifecycle, default: .notRunning)
        try visitor.field("refused", optionalList: &refused)
        try visitor.field("sequence", &sequence, default: 0, bitPattern: false)
    }
}

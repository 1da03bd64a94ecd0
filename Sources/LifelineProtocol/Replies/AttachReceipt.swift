/// The ATTACH reply: the subscriber's marker reached the bus; events published from now on reach it.
package struct AttachReceipt: Sendable, Equatable {
    public var bus: String
    public var epoch: UInt64
    public var sequence: UInt64
    public var lifecycle: LifecycleState

    public init(bus: String, epoch: UInt64, sequence: UInt64, lifecycle: LifecycleState) {
        self.bus = bus
        self.epoch = epoch
        self.sequence = sequence
        self.lifecycle = lifecycle
    }

    public init(json: JSONValue) {
        bus = json["bus"]?.stringValue ?? ""
        epoch = UInt64(bitPattern: json["epoch"]?.intValue ?? 0)
        sequence = UInt64(max(0, json["sequence"]?.intValue ?? 0))
        lifecycle = json["lifecycle"]?.stringValue.flatMap(LifecycleState.init(rawValue:)) ?? .notRunning
    }

    public var json: JSONValue {
        [
            "bus": .string(bus), "epoch": .int(Int64(epoch)), "sequence": .int(Int64(sequence)),
            "lifecycle": .string(lifecycle.rawValue),
        ]
    }
}

/// REPLAY: the journal's events of some names after a sequence of an epoch.
package struct ReplayRequest: Sendable, Equatable {
    public var after: UInt64
    public var epoch: UInt64
    public var events: [EventName]

    public init(after: UInt64, epoch: UInt64, events: [EventName]) {
        self.after = after
        self.epoch = epoch
        self.events = events
    }

    init(_ fields: HeaderFields) throws(ProtocolError) {
        guard let after = fields.value("after")?.intValue, after >= 0,
            let epoch = fields.value("epoch")?.intValue
        else { throw fields.problem("REPLAY needs integer fields 'after' and 'epoch'") }
        self.after = UInt64(after)
        self.epoch = UInt64(bitPattern: epoch)
        self.events = (fields.value("events")?.arrayValue ?? []).compactMap {
            $0.stringValue.map(EventName.init(rawValue:))
        }
    }

    var json: JSONValue {
        [
            "after": .int(Int64(after)), "epoch": .int(Int64(epoch)),
            "events": .array(events.map { .string($0.rawValue) }),
        ]
    }
}

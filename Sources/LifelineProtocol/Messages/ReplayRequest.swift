/// REPLAY: the journal's events of some names after a sequence of an epoch.
package struct ReplayRequest: HeaderMessage, Equatable {
    public var after: UInt64
    public var epoch: UInt64
    public var events: [EventName]

    public init(after: UInt64, epoch: UInt64, events: [EventName]) {
        self.after = after
        self.epoch = epoch
        self.events = events
    }

    package static let command = Command.replay
    package static let blank = ReplayRequest(after: 0, epoch: 0, events: [])

    package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        try visitor.field("after", &after, bitPattern: false)
        try visitor.field("epoch", &epoch, bitPattern: true)
        var names = events.map(\.rawValue)
        try visitor.field("events", &names)
        events = names.map(EventName.init(rawValue:))
    }
}

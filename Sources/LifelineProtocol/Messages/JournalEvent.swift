/// EVENT's header (broker → service): a bus event sent again from the journal, on the control
/// channel, its bus header as fields; the payload frame is the event's payload.
struct JournalEvent: HeaderMessage {
    var message: BusMessage

    init(_ message: BusMessage) { self.message = message }

    static let command = Command.event
    static let blank = JournalEvent(
        BusMessage(
            name: EventName(rawValue: ""),
            header: BusHeader(
                epoch: 0, sequence: 0, topicSequence: 0, publishedWallNanoseconds: 0,
                publishedMonotonicNanoseconds: 0),
            payload: []))

    mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        try visitor.field("epoch", &message.header.epoch, bitPattern: true)
        var name = message.name.rawValue
        try visitor.field("event", &name)
        message.name = EventName(rawValue: name)
        var flags: UInt64? = message.header.flags
        try visitor.field("flags", &flags, bitPattern: false)
        message.header.flags = flags ?? 0
        var monotonic: UInt64? = message.header.publishedMonotonicNanoseconds
        try visitor.field("publishedMonotonicNs", &monotonic, bitPattern: false)
        message.header.publishedMonotonicNanoseconds = monotonic ?? 0
        var wall: UInt64? = message.header.publishedWallNanoseconds
        try visitor.field("publishedWallNs", &wall, bitPattern: false)
        message.header.publishedWallNanoseconds = wall ?? 0
        try visitor.field("sequence", &message.header.sequence, bitPattern: false)
        try visitor.field("topicSequence", &message.header.topicSequence, bitPattern: false)
    }
}

/// EVENT: a bus event sent again from the journal, on the control channel.
enum JournalEvent {
    static func header(of message: BusMessage) -> JSONValue {
        [
            "event": .string(message.name.rawValue), "sequence": .int(Int64(message.header.sequence)),
            "topicSequence": .int(Int64(message.header.topicSequence)),
            "epoch": .int(Int64(message.header.epoch)), "flags": .int(Int64(message.header.flags)),
            "publishedWallNs": .int(Int64(message.header.publishedWallNanoseconds)),
            "publishedMonotonicNs": .int(Int64(message.header.publishedMonotonicNanoseconds)),
        ]
    }

    static func decode(_ fields: HeaderFields, payload: [UInt8]?) throws(ProtocolError) -> BusMessage {
        let name = try fields.string("event")
        let header = BusHeader(
            epoch: try fields.unsigned("epoch"), sequence: try fields.unsigned("sequence"),
            topicSequence: try fields.unsigned("topicSequence"),
            flags: try fields.optionalUnsigned("flags") ?? 0,
            publishedWallNanoseconds: try fields.optionalUnsigned("publishedWallNs") ?? 0,
            publishedMonotonicNanoseconds: try fields.optionalUnsigned("publishedMonotonicNs") ?? 0)
        return BusMessage(name: EventName(rawValue: name), header: header, payload: payload ?? [])
    }
}

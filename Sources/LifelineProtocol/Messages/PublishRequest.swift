/// PUBLISH: an event for the bus, with how the publisher wants it delivered and answered.
public struct PublishRequest: Sendable, Equatable {
    /// The event's name as sent (checked by the broker against the naming rule and the catalogue).
    public var event: EventName
    /// The event's JSON object as UTF-8 text; empty means `{}`.
    public var payload: [UInt8]
    /// Wait for every subscriber's acknowledgement: nil lets the event's own rule decide.
    public var acknowledged: Bool?
    /// How long to wait for acknowledgements.
    public var timeoutMilliseconds: Int?
    /// Apply the lifecycle transition even when it makes no sense in the current state.
    public var force: Bool
    /// False: send no reply at all (firehose publishers).
    public var reply: Bool
    /// The publisher's own id for this publication, unique per publisher: a repeat (a retry after a
    /// timeout) is answered with the first receipt and published only once.
    public var publishID: String?

    /// Longest accepted ``publishID``, in UTF-8 bytes.
    public static let maximumPublishIDLength = 128

    public init(
        event: EventName, payload: [UInt8] = [], acknowledged: Bool? = nil, timeoutMilliseconds: Int? = nil,
        force: Bool = false, reply: Bool = true, publishID: String? = nil
    ) {
        self.event = event
        self.payload = payload
        self.acknowledged = acknowledged
        self.timeoutMilliseconds = timeoutMilliseconds
        self.force = force
        self.reply = reply
        self.publishID = publishID
    }

    init(_ fields: HeaderFields, payload: [UInt8]?) throws(ProtocolError) {
        event = EventName(rawValue: try fields.string("event"))
        self.payload = payload ?? []
        acknowledged = try fields.optionalBool("ack")
        timeoutMilliseconds = try fields.optionalInteger("timeoutMs", in: 1...3_600_000)
        force = try fields.bool("force", default: false)
        reply = try fields.bool("reply", default: true)
        publishID = try fields.optionalString("publishId")
        if let publishID, publishID.isEmpty || publishID.utf8.count > Self.maximumPublishIDLength {
            throw fields.problem("PUBLISH 'publishId' must be 1...\(Self.maximumPublishIDLength) bytes")
        }
    }

    var header: JSONValue {
        var members: [String: JSONValue] = ["event": .string(event.rawValue)]
        if let acknowledged { members["ack"] = .bool(acknowledged) }
        if let timeoutMilliseconds { members["timeoutMs"] = .int(Int64(timeoutMilliseconds)) }
        if force { members["force"] = true }
        if !reply { members["reply"] = false }
        if let publishID { members["publishId"] = .string(publishID) }
        return .object(members)
    }
}

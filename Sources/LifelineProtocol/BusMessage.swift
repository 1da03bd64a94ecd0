/// The fixed header of a bus event: 48 bytes, six unsigned 64-bit big-endian integers.
package struct BusHeader: Sendable, Equatable {
    /// Size of the encoded header.
    public static let size = 48

    /// Identifies one life of the broker; sequences restart when it changes.
    public var epoch: UInt64
    /// Position of the event among all events of this epoch, from 1, strictly increasing.
    public var sequence: UInt64
    /// Position among the events of the same name in this epoch, from 1: a subscriber sees a gap
    /// when this skips.
    public var topicSequence: UInt64
    /// Bit 0: the publisher asked for acknowledgements. Other bits are reserved (zero).
    public var flags: UInt64
    /// Broker wall clock at publication, nanoseconds since 1970.
    public var publishedWallNanoseconds: UInt64
    /// Broker CLOCK_MONOTONIC at publication, nanoseconds (comparable on one host only).
    public var publishedMonotonicNanoseconds: UInt64

    public init(
        epoch: UInt64, sequence: UInt64, topicSequence: UInt64, flags: UInt64 = 0,
        publishedWallNanoseconds: UInt64,
        publishedMonotonicNanoseconds: UInt64
    ) {
        self.epoch = epoch
        self.sequence = sequence
        self.topicSequence = topicSequence
        self.flags = flags
        self.publishedWallNanoseconds = publishedWallNanoseconds
        self.publishedMonotonicNanoseconds = publishedMonotonicNanoseconds
    }

    /// The 48 bytes of the header.
    public func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        append(to: &bytes)
        return bytes
    }

    /// Appends the 48 bytes of the header to `bytes`.
    public func append(to bytes: inout [UInt8]) {
        // One append of the six fields laid out in a tuple (contiguous, no padding).
        var fields = (
            epoch.bigEndian, sequence.bigEndian, topicSequence.bigEndian, flags.bigEndian,
            publishedWallNanoseconds.bigEndian, publishedMonotonicNanoseconds.bigEndian
        )
        withUnsafeBytes(of: &fields) { bytes.append(contentsOf: $0) }
    }

    /// Reads the 48 header bytes at `offset` of `raw` (which holds them).
    init(_ raw: UnsafeRawBufferPointer, at offset: Int) {
        let field = { (index: Int) in
            UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: offset + index * 8, as: UInt64.self))
        }
        self.init(
            epoch: field(0), sequence: field(1), topicSequence: field(2), flags: field(3),
            publishedWallNanoseconds: field(4), publishedMonotonicNanoseconds: field(5))
    }

    /// Reads 48 header bytes; nil for any other length.
    public init?(decoding bytes: [UInt8]) {
        guard bytes.count == BusHeader.size else { return nil }
        let field = { (index: Int) in
            bytes.withUnsafeBytes {
                UInt64(bigEndian: $0.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self))
            }
        }
        self.init(
            epoch: field(0), sequence: field(1), topicSequence: field(2), flags: field(3),
            publishedWallNanoseconds: field(4), publishedMonotonicNanoseconds: field(5))
    }
}

/// An event on the bus: `[topic, LLB01, header, payload]`, where the topic is the event name followed
/// by one NUL byte so that ZeroMQ's prefix filter matches names exactly. One bus message may carry
/// several events of the same name: frame 2 then holds one 48-byte header per event and frame 3 their
/// payloads, each preceded by its length (see ``frames(batch:)``).
package struct BusMessage: Sendable, Equatable {
    public var name: EventName
    public var header: BusHeader
    /// The payload: a JSON object, as UTF-8 text.
    public var payload: [UInt8]

    public init(name: EventName, header: BusHeader, payload: [UInt8]) {
        self.name = name
        self.header = header
        self.payload = payload
    }

    /// The subscription (and topic frame) for exactly `name`.
    public static func topic(for name: EventName) -> [UInt8] { name.topic }

    /// The frames to publish.
    public func frames() -> [[UInt8]] {
        [name.topic, ProtocolID.busBytes, header.encoded(), payload]
    }

    /// Most events one bus message carries.
    public static let maximumBatch = 1024
    /// Most payload bytes one bus message of several events carries (a batch is cut before it).
    public static let maximumBatchBytes = 64 * 1024

    /// The frames of one bus message carrying `messages`, which all have the same name:
    /// `[topic, LLB01, header, payload]` for one event; for several, one 48-byte header per event in
    /// frame 2 and their payloads in frame 3, each preceded by its length (4 bytes, big-endian).
    public static func frames(batch messages: some Collection<BusMessage>) -> [[UInt8]] {
        guard let first = messages.first else { return [] }
        var headers: [UInt8] = []
        headers.reserveCapacity(messages.count * BusHeader.size)
        for message in messages { message.header.append(to: &headers) }
        guard messages.count > 1 else {
            return [first.name.topic, ProtocolID.busBytes, headers, first.payload]
        }
        let payloads = PackedPayloads.frame(messages.lazy.map(\.payload))
        return [first.name.topic, ProtocolID.busBytes, headers, payloads]
    }

    /// Decodes a bus message of exactly one event, saying what is wrong when it does not follow the
    /// protocol.
    public static func decode(_ frames: [[UInt8]]) throws(ProtocolError) -> BusMessage {
        let messages = try decodeBatch(frames)
        guard messages.count == 1 else {
            throw ProtocolError(.badRequest, "expected one event in the bus message, got \(messages.count)")
        }
        return messages[0]
    }

    /// Decodes a bus message of one or more events (in order), saying what is wrong when it does
    /// not follow the protocol.
    public static func decodeBatch(_ frames: [[UInt8]]) throws(ProtocolError)
        -> [BusMessage]
    {
        try checkFrameCount(frames.count)
        return try frames[0].withUnsafeBytes { topic in
            frames[1].withUnsafeBytes { version in
                frames[2].withUnsafeBytes { headers in
                    frames[3].withUnsafeBytes { payloads in
                        Result { () throws(ProtocolError) in
                            try decodeBatch(
                                topic: topic, protocolID: version, headers: headers, payloads: payloads)
                        }
                    }
                }
            }
        }.get()
    }

    /// Says what is wrong when a bus message of `count` frames is not the four it must be.
    public static func checkFrameCount(_ count: Int) throws(ProtocolError) {
        guard count == 4 else {
            throw ProtocolError(
                .badRequest, "a bus message has 4 frames (topic, LLB01, headers, payloads), got \(count)")
        }
    }

    /// ``decodeBatch(_:)`` over the four frames read where they lie (a socket's buffers): only
    /// the payloads are copied.
    public static func decodeBatch(
        topic: UnsafeRawBufferPointer, protocolID: UnsafeRawBufferPointer, headers: UnsafeRawBufferPointer,
        payloads: UnsafeRawBufferPointer
    ) throws(ProtocolError) -> [BusMessage] {
        guard topic.count > 1, topic[topic.count - 1] == 0 else {
            throw ProtocolError(.badRequest, "bus topic must end with a NUL byte")
        }
        guard ByteComparison.equal(protocolID, ProtocolID.busLiteral) else {
            throw ProtocolError(
                .versionNotSupported,
                "bus protocol \(ControlMessage.printable(Array(protocolID))) is not \(ProtocolID.bus)")
        }
        guard !headers.isEmpty, headers.count % BusHeader.size == 0 else {
            throw ProtocolError(
                .badRequest, "bus headers must be a multiple of \(BusHeader.size) bytes, got \(headers.count)"
            )
        }
        let count = headers.count / BusHeader.size
        let name = EventName(
            rawValue: String(
                decoding: UnsafeRawBufferPointer(rebasing: topic[..<(topic.count - 1)])
                    .assumingMemoryBound(to: UInt8.self), as: UTF8.self))
        if count == 1 {
            // An array literal: reserveCapacity would take the runtime's unspecialized allocation.
            return [
                BusMessage(
                    name: name, header: BusHeader(headers, at: 0),
                    payload: Array(payloads.assumingMemoryBound(to: UInt8.self)))
            ]
        }
        var messages: [BusMessage] = []
        messages.reserveCapacity(count)
        let payloads = try PackedPayloads.unpack(payloads, count: count, what: "bus payloads frame")
        for index in 0..<count {
            messages.append(
                BusMessage(
                    name: name, header: BusHeader(headers, at: index * BusHeader.size),
                    payload: payloads[index]))
        }
        return messages
    }
}

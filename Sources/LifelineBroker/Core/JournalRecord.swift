import LifelineProtocol

/// What the durable journal keeps: the published events, with the publisher's id and subscriber
/// count of each (so that a repeat after a restart is still answered once), and the epoch, the last
/// sequence and the topic positions of every event name (so that numbers never restart, even when
/// no event is left); and where each service name stands in its `shared` events.
enum JournalRecord: Sendable, Equatable {
    /// `batch`: with a `publishID`, how many events the publication had (this is its last).
    case event(BusMessage, publishID: String?, subscribers: Int, batch: Int = 1)
    case topics([EventName: EventJournal.TopicState], epoch: UInt64, sequence: UInt64)
    /// A name's whole position in its shared events (it declared them, or the journal was rewritten).
    case sharedCursor(SharedCursor)
    /// One shared event of `name` is done (an instance acknowledged it, or it was dropped).
    case sharedHandled(name: String, sequence: UInt64)

    /// The top bit of a record's length word: the body is followed by its CRC-32C. Every record
    /// written has one; records of journals written before it was added have none and are read as
    /// they are.
    static let checksummed: UInt32 = 0x8000_0000

    /// The record as bytes: a 4-byte big-endian length (with ``checksummed`` set), a kind byte and
    /// the fields, then the 4-byte big-endian CRC-32C of the kind byte and fields.
    func encoded() -> [UInt8] {
        var body: [UInt8] = []
        switch self {
        case .event(let message, let publishID, let subscribers, let batch):
            body.append(1)
            Self.append(Array(message.name.rawValue.utf8), to: &body)
            body += message.header.encoded()
            Self.append(message.payload, to: &body)
            Self.append(Array((publishID ?? "").utf8), to: &body)
            Self.append(UInt32(clamping: subscribers), to: &body)
            if batch > 1 { Self.append(UInt32(clamping: batch), to: &body) }
        case .topics(let topics, let epoch, let sequence):
            body.append(2)
            Self.append(epoch, to: &body)
            Self.append(sequence, to: &body)
            Self.append(UInt32(topics.count), to: &body)
            for (name, state) in topics.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                Self.append(Array(name.rawValue.utf8), to: &body)
                Self.append(state.sequence, to: &body)
                Self.append(state.topicSequence, to: &body)
            }
        case .sharedCursor(let cursor):
            body.append(3)
            Self.append(Array(cursor.name.utf8), to: &body)
            Self.append(cursor.after, to: &body)
            Self.append(UInt32(cursor.since.count), to: &body)
            for (event, since) in cursor.since.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                Self.append(Array(event.rawValue.utf8), to: &body)
                Self.append(since, to: &body)
            }
            Self.append(UInt32(cursor.handled.count), to: &body)
            for sequence in cursor.handled.sorted() { Self.append(sequence, to: &body) }
        case .sharedHandled(let name, let sequence):
            body.append(4)
            Self.append(Array(name.utf8), to: &body)
            Self.append(sequence, to: &body)
        }
        var record: [UInt8] = []
        record.reserveCapacity(body.count + 8)
        Self.append(UInt32(body.count) | Self.checksummed, to: &record)
        record += body
        Self.append(CRC32C.checksum(body), to: &record)
        return record
    }

    /// Reads the records at the start of `bytes`; returns them and how many bytes they took. It
    /// stops at the first record it cannot read: one cut short (a torn last record, written when
    /// the broker was killed), one whose checksum does not match its bytes, or one that does not
    /// decode.
    static func decodeAll(_ bytes: [UInt8]) -> (records: [JournalRecord], length: Int) {
        var records: [JournalRecord] = []
        var offset = 0
        while let (body, checksum) = frame(bytes[offset...]) {
            if let checksum, CRC32C.checksum(bytes[body]) != checksum { break }
            var reader = Reader(bytes: bytes, offset: body.lowerBound)
            guard let record = decode(&reader, end: body.upperBound) else { break }
            records.append(record)
            offset = body.upperBound + (checksum == nil ? 0 : 4)
        }
        return (records, offset)
    }

    /// Where the body of the record at the start of `bytes` lies, and the checksum stored after it
    /// (nil for a record written without one); nil when the record is cut short.
    private static func frame(_ bytes: ArraySlice<UInt8>) -> (body: Range<Int>, checksum: UInt32?)? {
        func word(at index: Int) -> UInt32 {
            bytes[index..<index + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        }
        guard bytes.count >= 4 else { return nil }
        let length = word(at: bytes.startIndex)
        let hasChecksum = length & checksummed != 0
        let body = bytes.startIndex + 4..<bytes.startIndex + 4 + Int(length & ~checksummed)
        guard body.upperBound + (hasChecksum ? 4 : 0) <= bytes.endIndex else { return nil }
        return (body, hasChecksum ? word(at: body.upperBound) : nil)
    }

    /// Whether `rest`, what ``decodeAll(_:)`` could not read, is a record cut short — the broker was
    /// killed in the middle of a write — rather than a damaged one: fewer bytes than a length, or a
    /// length that runs past the end with no whole record after it. A whole record whose checksum
    /// fails is damaged, and so is a length word that runs past the end while a whole checksummed
    /// record follows within the largest record's size (the length itself was damaged: what follows
    /// is history).
    static func isTorn(_ rest: ArraySlice<UInt8>) -> Bool {
        guard frame(rest) == nil else { return false }
        // The next whole record starts within the largest record after the damaged one's start.
        let window = (1 << 26) + 8
        let scanned = rest.count > window ? rest.startIndex + window : rest.endIndex
        for start in (rest.startIndex + 1)..<max(rest.startIndex + 1, scanned) {
            guard case let (body, checksum?)? = frame(rest[start...]), body.count <= 1 << 26,
                (1...4).contains(rest[body.lowerBound]), CRC32C.checksum(rest[body]) == checksum
            else { continue }
            return false
        }
        return true
    }

    private static func decode(_ reader: inout Reader, end: Int) -> JournalRecord? {
        switch reader.byte() {
        case 1:
            guard let name = reader.text(), let headerBytes = reader.bytes(BusHeader.size),
                let header = BusHeader(decoding: headerBytes), let payload = reader.block(),
                let publishID = reader.text(), let subscribers = reader.uint32()
            else { return nil }
            var batch: UInt32 = 1
            if reader.offset + 4 == end, let count = reader.uint32() { batch = count }
            guard reader.offset == end else { return nil }
            return .event(
                BusMessage(name: EventName(rawValue: name), header: header, payload: payload),
                publishID: publishID.isEmpty ? nil : publishID, subscribers: Int(subscribers),
                batch: Int(batch))
        case 2:
            guard let epoch = reader.uint64(), let sequence = reader.uint64(), let count = reader.uint32()
            else {
                return nil
            }
            var topics: [EventName: EventJournal.TopicState] = [:]
            for _ in 0..<count {
                guard let name = reader.text(), let sequence = reader.uint64(), let topic = reader.uint64()
                else {
                    return nil
                }
                topics[EventName(rawValue: name)] = EventJournal.TopicState(
                    sequence: sequence, topicSequence: topic)
            }
            return reader.offset == end ? .topics(topics, epoch: epoch, sequence: sequence) : nil
        case 3:
            guard let name = reader.text(), let after = reader.uint64(), let count = reader.uint32() else {
                return nil
            }
            var since: [EventName: UInt64] = [:]
            for _ in 0..<count {
                guard let event = reader.text(), let sequence = reader.uint64() else { return nil }
                since[EventName(rawValue: event)] = sequence
            }
            guard let handledCount = reader.uint32(), Int(handledCount) * 8 <= end - reader.offset else {
                return nil
            }
            var handled: Set<UInt64> = []
            for _ in 0..<handledCount {
                guard let sequence = reader.uint64() else { return nil }
                handled.insert(sequence)
            }
            let cursor = SharedCursor(name: name, after: after, since: since, handled: handled)
            return reader.offset == end ? .sharedCursor(cursor) : nil
        case 4:
            guard let name = reader.text(), let sequence = reader.uint64(), reader.offset == end else {
                return nil
            }
            return .sharedHandled(name: name, sequence: sequence)
        default: return nil
        }
    }

    private static func append(_ block: [UInt8], to bytes: inout [UInt8]) {
        append(UInt32(block.count), to: &bytes)
        bytes += block
    }

    private static func append(_ value: UInt32, to bytes: inout [UInt8]) {
        for shift in stride(from: 24, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> shift))
        }
    }

    private static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        for shift in stride(from: 56, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> shift))
        }
    }

    private struct Reader {
        let bytes: [UInt8]
        var offset: Int

        mutating func byte() -> UInt8? {
            guard offset < bytes.count else { return nil }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func bytes(_ count: Int) -> [UInt8]? {
            guard count >= 0, offset + count <= bytes.count else { return nil }
            defer { offset += count }
            return Array(bytes[offset..<offset + count])
        }

        mutating func uint32() -> UInt32? {
            bytes(4).map { $0.reduce(0) { $0 << 8 | UInt32($1) } }
        }

        mutating func uint64() -> UInt64? {
            bytes(8).map { $0.reduce(0) { $0 << 8 | UInt64($1) } }
        }

        mutating func block() -> [UInt8]? {
            guard let count = uint32() else { return nil }
            return bytes(Int(count))
        }

        mutating func text() -> String? {
            block().flatMap { String(validating: $0, as: UTF8.self) }
        }
    }
}

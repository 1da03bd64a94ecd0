/// Several payloads in one frame, each preceded by its length (4 bytes, big-endian): how a bus
/// message of several events and a PUBLISH of several events carry them, so that a batch costs
/// ZeroMQ one frame instead of one per event.
package enum PackedPayloads {
    /// The frame holding `first` (when given), then `payloads`, allocated once at its size.
    public static func frame(_ payloads: some Collection<[UInt8]>, after first: [UInt8]? = nil) -> [UInt8] {
        var size = first.map { 4 + $0.count } ?? 0
        for payload in payloads { size += 4 + payload.count }
        var frame: [UInt8] = []
        frame.reserveCapacity(size)
        if let first { append(first, to: &frame) }
        for payload in payloads { append(payload, to: &frame) }
        return frame
    }

    /// Appends `payload` to `frame`: its length, then its bytes.
    public static func append(_ payload: [UInt8], to frame: inout [UInt8]) {
        withUnsafeBytes(of: UInt32(payload.count).bigEndian) { frame.append(contentsOf: $0) }
        frame.append(contentsOf: payload)
    }

    /// The `count` payloads in `frame`; `what` names the frame in the error (`bus payloads frame`).
    public static func unpack(_ frame: [UInt8], count: Int, what: String) throws(ProtocolError) -> [[UInt8]] {
        try frame.withUnsafeBytes { raw in
            Result { () throws(ProtocolError) in try unpack(raw, count: count, what: what) }
        }
        .get()
    }

    /// The `count` payloads in `frame`, read in place.
    public static func unpack(_ frame: UnsafeRawBufferPointer, count: Int, what: String) throws(ProtocolError)
        -> [[UInt8]]
    {
        var payloads: [[UInt8]] = []
        payloads.reserveCapacity(count)
        var offset = 0
        for index in 0..<count {
            guard offset + 4 <= frame.count else {
                throw ProtocolError(.badRequest, "\(what) ends before payload \(index + 1) of \(count)")
            }
            let length = frame[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            offset += 4
            guard offset + length <= frame.count else {
                throw ProtocolError(
                    .badRequest, "payload \(index + 1) of \(count) is longer than the \(what)")
            }
            payloads.append(
                Array(
                    UnsafeRawBufferPointer(rebasing: frame[offset..<offset + length]).assumingMemoryBound(
                        to: UInt8.self)))
            offset += length
        }
        guard offset == frame.count else {
            throw ProtocolError(
                .badRequest, "\(what) has \(frame.count - offset) bytes after its \(count) payloads")
        }
        return payloads
    }
}

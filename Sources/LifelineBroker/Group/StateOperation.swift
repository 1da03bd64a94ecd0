import LifelineProtocol

/// One change to a broker's state directory, as the leader replicates it: what a step of the broker
/// asked to be written (``BrokerOutput/record(_:)``, ``BrokerOutput/rewriteJournal(_:)``,
/// ``BrokerOutput/persist(file:document:)``), in bytes.
package enum StateOperation: Equatable, Sendable {
    /// Append encoded journal records to `journal.log`.
    case appendJournal([UInt8])
    /// Replace `journal.log` with these records.
    case rewriteJournal([UInt8])
    /// Replace `file` (`sessions.json`, `boot.json`, `lifecycle.json`) with these bytes.
    case replace(file: String, bytes: [UInt8])
    /// Nothing to write: the first entry of a leader's term, which a majority must hold before the
    /// leader answers anyone (its copy may hold entries a majority did not).
    case beginTerm(UInt64)

    /// The state files a snapshot carries, journal first.
    package static let files = ["journal.log", "sessions.json", "boot.json", "lifecycle.json"]

    /// The operations of `output`, in order (consecutive records joined).
    package static func of(_ output: [BrokerOutput]) -> [StateOperation] {
        var operations: [StateOperation] = []
        for item in output {
            switch item {
            case .record(let record):
                if case .appendJournal(let pending) = operations.last {
                    operations[operations.count - 1] = .appendJournal(pending + record)
                } else {
                    operations.append(.appendJournal(record))
                }
            case .rewriteJournal(let records): operations.append(.rewriteJournal(records))
            case .persist(let file, let document):
                operations.append(.replace(file: file, bytes: JSONWriter.encode(document)))
            case .send, .publish, .log: break
            }
        }
        return operations
    }

    /// Two frames: a kind with the file name (`A`, `W`, `R:file`) and the bytes.
    var frames: [[UInt8]] {
        switch self {
        case .appendJournal(let bytes): [Array("A".utf8), bytes]
        case .rewriteJournal(let bytes): [Array("W".utf8), bytes]
        case .replace(let file, let bytes): [Array("R:\(file)".utf8), bytes]
        case .beginTerm(let term): [Array("T".utf8), Array(String(term).utf8)]
        }
    }

    /// The operations held in `frames` (pairs of kind and bytes).
    /// - Throws: ``GroupProtocolError`` for an odd count, an unknown kind or a file not in ``files``.
    static func decode(_ frames: ArraySlice<[UInt8]>) throws(GroupProtocolError) -> [StateOperation] {
        guard frames.count % 2 == 0 else {
            throw GroupProtocolError("state operations come in pairs of frames")
        }
        var operations: [StateOperation] = []
        var index = frames.startIndex
        while index < frames.endIndex {
            let kind = String(decoding: frames[index], as: UTF8.self)
            let bytes = frames[index + 1]
            switch kind {
            case "A": operations.append(.appendJournal(bytes))
            case "W": operations.append(.rewriteJournal(bytes))
            case "T": operations.append(.beginTerm(UInt64(String(decoding: bytes, as: UTF8.self)) ?? 0))
            case _ where kind.hasPrefix("R:") && files.contains(String(kind.dropFirst(2))):
                operations.append(.replace(file: String(kind.dropFirst(2)), bytes: bytes))
            default: throw GroupProtocolError("unknown state operation '\(kind.prefix(40))'")
            }
            index += 2
        }
        return operations
    }
}

/// A group message that does not follow docs/PROTOCOL.md §13.
package struct GroupProtocolError: Error, Sendable, CustomStringConvertible {
    package var message: String
    package init(_ message: String) { self.message = message }
    package var description: String { message }
}

import LifelineProtocol

/// A message between the brokers of a group (docs/PROTOCOL.md §13): `LLG01`, a command, a JSON
/// header, then the command's blobs (state operations or snapshot files).
package struct GroupMessage: Equatable, Sendable {
    package enum Command: String, Sendable, CaseIterable {
        /// standby → leader: send me the state, then every entry.
        case join = "JOIN"
        /// leader → standby (or member → candidate, on FETCH): the whole state directory.
        case snapshot = "SNAPSHOT"
        /// leader → standby: one entry's state operations.
        case append = "APPEND"
        /// standby → leader: I hold everything up to `index`.
        case ack = "ACK"
        /// leader → standby, every 100 ms: I still lead; what is committed.
        case beat = "BEAT"
        /// candidate → member: how far does your copy go? (and take my term)
        case ask = "ASK"
        /// member → candidate: my position.
        case position = "POSITION"
        /// candidate → member: send me your copy.
        case fetch = "FETCH"
        /// Either way: your term is older than mine, or you are not of my group.
        case refuse = "REFUSE"
    }

    /// Why a REFUSE refuses (its `code`).
    package enum Refusal: String, Sendable {
        /// The sender's term is older than one the refuser has taken.
        case staleTerm = "stale-term"
        /// The refuser does not lead: it is a standby.
        case notLeading = "not-leading"
        /// The refuser won the leader key and is gathering positions: JOIN again in 100 ms.
        case takingLead = "taking-lead"
        /// The leader does not count the sender among its standbys: it is to JOIN again.
        case notFollowing = "not-following"
        /// The sender is not a member of the refuser's group.
        case notMember = "not-member"
    }

    package static let protocolID: [UInt8] = Array("LLG01".utf8)

    package var command: Command
    package var header: [String: JSONValue]
    package var blobs: [[UInt8]]

    package init(_ command: Command, _ header: [String: JSONValue], blobs: [[UInt8]] = []) {
        self.command = command
        self.header = header
        self.blobs = blobs
    }

    package var frames: [[UInt8]] {
        [Self.protocolID, Array(command.rawValue.utf8), JSONWriter.encode(.object(header))] + blobs
    }

    /// - Throws: ``GroupProtocolError`` saying what is wrong with the frames.
    package static func decode(_ frames: ArraySlice<[UInt8]>) throws(GroupProtocolError) -> GroupMessage {
        guard frames.count >= 3, Array(frames[frames.startIndex]) == protocolID else {
            throw GroupProtocolError("not a group message (LLG01, command, header, blobs)")
        }
        let name = String(decoding: frames[frames.startIndex + 1], as: UTF8.self)
        guard let command = Command(rawValue: name) else {
            throw GroupProtocolError("unknown group command '\(name.prefix(40))'")
        }
        guard case .object(let header)? = try? JSONParser.parse(frames[frames.startIndex + 2]) else {
            throw GroupProtocolError("the \(name) header is not a JSON object")
        }
        return GroupMessage(command, header, blobs: Array(frames.dropFirst(3)))
    }

    /// The header's `field` as an unsigned integer (0 when missing).
    package func number(_ field: String) -> UInt64 { UInt64(clamping: header[field]?.intValue ?? 0) }

    /// The header's `field` as a string ("" when missing).
    package func text(_ field: String) -> String { header[field]?.stringValue ?? "" }

    /// A REFUSE's code (nil when it has none this version knows).
    package var refusal: Refusal? { Refusal(rawValue: text("code")) }

    /// The position a POSITION or SNAPSHOT states.
    package var position: ReplicaPosition {
        ReplicaPosition(term: number("lastTerm"), index: number("index"))
    }
}

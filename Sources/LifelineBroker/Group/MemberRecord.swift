import LifelineProtocol

/// What etcd holds of a member (`member/NAME`, under its lease) and of the leader (`leader`): where
/// it is reached. The leader's record also carries its lease, which a standby revokes when the
/// leader falls silent, and its term (the key's creation revision, not stored in the value).
package struct MemberRecord: Equatable, Sendable {
    package var member: String
    package var control: [String]
    package var bus: [String]
    package var replicate: String
    package var lease: Int64 = 0
    /// Set from the key's creation revision when read as the leader.
    package var term: UInt64 = 0

    package init(member: String, control: [String], bus: [String], replicate: String) {
        self.member = member
        self.control = control
        self.bus = bus
        self.replicate = replicate
    }

    package var json: JSONValue {
        [
            "member": .string(member), "control": .array(control.map(JSONValue.string)),
            "bus": .array(bus.map(JSONValue.string)), "replicate": .string(replicate),
            "lease": .string(String(lease)),
        ]
    }

    package init?(_ bytes: [UInt8]) {
        guard let json = try? JSONParser.parse(bytes), let member = json["member"]?.stringValue,
            let replicate = json["replicate"]?.stringValue
        else { return nil }
        self.member = member
        self.replicate = replicate
        control = json["control"]?.arrayValue?.compactMap(\.stringValue) ?? []
        bus = json["bus"]?.arrayValue?.compactMap(\.stringValue) ?? []
        lease = json["lease"]?.stringValue.flatMap { Int64($0) } ?? 0
    }
}

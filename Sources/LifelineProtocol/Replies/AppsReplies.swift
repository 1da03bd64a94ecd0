/// The APPS replies (docs/PROTOCOL.md §6), declared once: what the broker writes and a client reads.
package enum AppsReplies {
    /// A stack change's reply, and a repeated change's: the stack after it, the session started or
    /// brought forward, the sessions that left.
    package struct Change: WireRecord, Equatable {
        package var exited: [SessionRecord]?
        package var repeated: Bool?
        package var session: SessionRecord?
        package var stack: [SessionRecord]

        package init(
            stack: [SessionRecord], session: SessionRecord? = nil, exited: [SessionRecord]? = nil,
            repeated: Bool? = nil
        ) {
            self.stack = stack
            self.session = session
            self.exited = exited
            self.repeated = repeated
        }

        package static var blank: Self { Self(stack: []) }
        package static var recordName: String { "the APPS reply" }

        package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure)
        {
            try visitor.field("exited", optionalRecords: &exited)
            try visitor.field("repeated", &repeated)
            try visitor.field("session", record: &session)
            try visitor.field("stack", records: &stack)
        }
    }

    /// `list`: the stack, bottom first, and the launcher app (null without one).
    package struct List: WireRecord, Equatable {
        package var launcher: String?
        package var stack: [SessionRecord]

        package init(stack: [SessionRecord], launcher: String?) {
            self.stack = stack
            self.launcher = launcher
        }

        package static var blank: Self { Self(stack: [], launcher: nil) }
        package static var recordName: String { "the APPS list reply" }

        package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure)
        {
            try visitor.field("launcher", nullable: &launcher)
            try visitor.field("stack", records: &stack)
        }
    }

    /// `current`: the session on top (null on an empty stack).
    package struct Current: WireRecord, Equatable {
        package var session: SessionRecord?

        package init(session: SessionRecord?) { self.session = session }

        package static var blank: Self { Self(session: nil) }
        package static var recordName: String { "the APPS current reply" }

        package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure)
        {
            try visitor.field("session", nullableRecord: &session)
        }
    }

    /// `find --all`: every session of an app, bottom first.
    package struct Found: WireRecord, Equatable {
        package var sessions: [SessionRecord]

        package init(sessions: [SessionRecord]) { self.sessions = sessions }

        package static var blank: Self { Self(sessions: []) }
        package static var recordName: String { "the APPS find reply" }

        package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure)
        {
            try visitor.field("sessions", records: &sessions)
        }
    }
}

/// What a service says about itself, for `lifeline describe` (like `busctl introspect` or `nats
/// micro info`): one line per method with its argument and reply shapes, and the fields of the
/// custom events it publishes or handles. REGISTER carries it as `"describe"`.
package struct ServiceDescription: Sendable, Equatable {
    public struct Method: Sendable, Equatable {
        public var summary: String
        /// The body's shape, e.g. `{"url": string}`.
        public var arguments: String
        /// The reply's shape.
        public var reply: String

        public init(summary: String, arguments: String = "", reply: String = "") {
            self.summary = summary
            self.arguments = arguments
            self.reply = reply
        }
    }

    public struct Event: Sendable, Equatable {
        public var summary: String
        /// Field name → type (`string`, `number`, `bool`, `object`, …).
        public var fields: [String: String]

        public init(summary: String, fields: [String: String] = [:]) {
            self.summary = summary
            self.fields = fields
        }
    }

    public var methods: [String: Method] = [:]
    public var events: [String: Event] = [:]

    /// Longest description a REGISTER may carry, in bytes of its JSON.
    public static let maximumBytes = 16_384

    public init(methods: [String: Method] = [:], events: [String: Event] = [:]) {
        self.methods = methods
        self.events = events
    }

    public var isEmpty: Bool { methods.isEmpty && events.isEmpty }

    /// What is wrong with the description of a service answering `known` methods, nil when
    /// nothing: a method it does not answer, an event that is not custom. (Its size is judged on
    /// the text as it came, ``maximumBytes``.)
    func problem(methods known: [String]) -> String? {
        if let stray = methods.keys.sorted().first(where: { !known.contains($0) }) {
            return "'describe' names the method '\(stray)', which is not in 'methods'"
        }
        if let stray = events.keys.sorted().first(where: { !EventName(rawValue: $0).isCustom }) {
            return "'describe' may describe custom events only (with a namespace), not '\(stray)'"
        }
        return nil
    }
}

/// REGISTER's `describe`, declared once: `{"events": {name: {"fields": {field: type}, "summary"}},
/// "methods": {name: {"arguments", "reply", "summary"}}}`.
extension ServiceDescription: WireRecord {
    package static let blank = ServiceDescription()
    package static let recordName = "'describe'"

    /// A method's name as a key of `methods`.
    struct MethodName: RawRepresentable, Hashable {
        var rawValue: String
    }

    package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        var byEvent = Dictionary(uniqueKeysWithValues: events.map { (EventName(rawValue: $0.key), $0.value) })
        try visitor.field("events", records: &byEvent)
        events = Dictionary(uniqueKeysWithValues: byEvent.map { ($0.key.rawValue, $0.value) })
        var byMethod = Dictionary(
            uniqueKeysWithValues: methods.map { (MethodName(rawValue: $0.key), $0.value) })
        try visitor.field("methods", records: &byMethod)
        methods = Dictionary(uniqueKeysWithValues: byMethod.map { ($0.key.rawValue, $0.value) })
    }
}

extension ServiceDescription.Method: WireRecord {
    package static let blank = Self(summary: "")
    package static let recordName = "a described method"

    package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        try visitor.field("arguments", &arguments, default: "")
        try visitor.field("reply", &reply, default: "")
        try visitor.field("summary", &summary, default: "")
    }
}

extension ServiceDescription.Event: WireRecord {
    package static let blank = Self(summary: "")
    package static let recordName = "a described event"

    package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        try visitor.field("fields", strings: &fields)
        try visitor.field("summary", &summary, default: "")
    }
}

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

    public var json: JSONValue {
        [
            "methods": .object(
                methods.mapValues {
                    [
                        "summary": .string($0.summary), "arguments": .string($0.arguments),
                        "reply": .string($0.reply),
                    ]
                }),
            "events": .object(
                events.mapValues {
                    ["summary": .string($0.summary), "fields": .object($0.fields.mapValues { .string($0) })]
                }),
        ]
    }

    /// Reads REGISTER's `describe`; every described method must be one of `methods`.
    /// - Throws: ``ProtocolError`` (400) saying what is wrong, without the command's name.
    public init(json: JSONValue, methods known: [String]) throws(ProtocolError) {
        guard JSONWriter.encode(json).count <= Self.maximumBytes else {
            throw ProtocolError(.badRequest, "'describe' is at most \(Self.maximumBytes) bytes")
        }
        for (name, value) in json["methods"]?.objectValue ?? [:] {
            guard known.contains(name) else {
                throw ProtocolError(
                    .badRequest, "'describe' names the method '\(name)', which is not in 'methods'")
            }
            methods[name] = Method(
                summary: value["summary"]?.stringValue ?? "",
                arguments: value["arguments"]?.stringValue ?? "",
                reply: value["reply"]?.stringValue ?? "")
        }
        for (name, value) in json["events"]?.objectValue ?? [:] {
            guard EventName(rawValue: name).isCustom else {
                throw ProtocolError(
                    .badRequest,
                    "'describe' may describe custom events only (with a namespace), not '\(name)'")
            }
            var fields: [String: String] = [:]
            for (field, type) in value["fields"]?.objectValue ?? [:] {
                fields[field] = type.stringValue ?? ""
            }
            events[name] = Event(summary: value["summary"]?.stringValue ?? "", fields: fields)
        }
    }
}

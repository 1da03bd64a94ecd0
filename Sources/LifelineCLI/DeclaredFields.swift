import Lifeline
import LifelineProtocol
import LifelineSupport

/// The JSON types of an event's or a method's top-level fields, as their declarations give them
/// (the event catalogue, or what a service described at REGISTER: `integer`, `number`, `string?`,
/// `[string]`, `{"x": number}`), so that `key=value` on the command line becomes a value of the
/// declared type — `items=3` a number, `urgent=true` a boolean — or is refused naming the field,
/// and a required field left out is refused before anything is sent.
struct DeclaredFields: Equatable {
    /// Field name → type, without the `?` that marks an optional field.
    let types: [String: String]
    /// The fields without a `?`: what a receiver needs to decode the value.
    let required: Set<String>
    /// What declared them, for error messages: `event com.example.cart.didChange`, `cart.add`.
    let subject: String

    init(_ types: [String: String], subject: String) {
        self.types = types.mapValues { $0.hasSuffix("?") ? String($0.dropLast()) : $0 }
        self.required = Set(types.filter { !$0.value.hasSuffix("?") }.keys)
        self.subject = subject
    }

    private init(types: [String: String], required: Set<String>, subject: String) {
        self.types = types
        self.required = required
        self.subject = subject
    }

    /// The fields a built-in event's catalogue entry lists.
    static func builtIn(_ event: EventName) -> DeclaredFields? {
        guard let descriptor = EventCatalog.descriptor(for: event) else { return nil }
        return DeclaredFields(
            Dictionary(descriptor.fields.map { ($0.name, $0.kind.rawValue) }, uniquingKeysWith: { $1 }),
            subject: "event \(event)")
    }

    /// The fields the registered `services` describe for the custom event `event`: their union,
    /// required where every service that describes the field requires it; nil when none describes
    /// the event.
    static func described(_ event: EventName, by services: [ServiceRecord]) -> DeclaredFields? {
        let described = services.compactMap { $0.registration.description.events[event.rawValue] }
            .map { DeclaredFields($0.fields, subject: "") }
        guard !described.isEmpty else { return nil }
        var types: [String: String] = [:]
        for fields in described { types.merge(fields.types) { first, _ in first } }
        let required = Set(types.keys).filter { name in
            described.allSatisfy { $0.types[name] == nil || $0.required.contains(name) }
        }
        return DeclaredFields(types: types, required: required, subject: "event \(event)")
    }

    /// The arguments `service`'s `method` takes, as its description gives them; nil when it
    /// describes none, or takes no object.
    static func arguments(of method: String, in service: ServiceRecord) -> DeclaredFields? {
        guard let shape = service.registration.description.methods[method]?.arguments,
            let members = members(ofShape: shape)
        else { return nil }
        return DeclaredFields(members, subject: "\(service.name).\(method)")
    }

    /// The top-level members of a described shape, `{"user": string, "tags"?: [string], …}`, an
    /// optional one's type marked `?` (`"tags": "[string]?"`); nil when the shape is not an object.
    static func members(ofShape text: String) -> [String: String]? {
        let characters = Array(text.trimmingCharacters(in: .whitespaces))
        guard characters.first == "{", characters.last == "}" else { return nil }
        var members: [String: String] = [:]
        var depth = 0
        var inString = false
        var piece: [Character] = []
        func finish() {
            let entry = String(piece).trimmingCharacters(in: .whitespaces)
            piece = []
            guard entry.hasPrefix("\""), let close = entry.dropFirst().firstIndex(of: "\"") else { return }
            let name = String(entry[entry.index(after: entry.startIndex)..<close])
            var rest = entry[entry.index(after: close)...]
            let optional = rest.hasPrefix("?")
            if optional { rest = rest.dropFirst() }
            guard rest.hasPrefix(":") else { return }
            members[name] = rest.dropFirst().trimmingCharacters(in: .whitespaces) + (optional ? "?" : "")
        }
        for character in characters.dropFirst().dropLast() {
            if character == "\"" { inString.toggle() }
            if !inString {
                if character == "{" || character == "[" { depth += 1 }
                if character == "}" || character == "]" { depth -= 1 }
                if character == "," && depth == 0 {
                    finish()
                    continue
                }
            }
            piece.append(character)
        }
        finish()
        return members
    }

    /// `text`, given as `key=text`, as a value of the type declared for `key`; a string when the
    /// field is not declared or takes any JSON.
    /// - Throws: ``UsageError`` naming the field and its type when `text` is not of that type, or
    ///   when the type is an array or object (which `key:=JSON` gives).
    func value(of key: String, _ text: String) throws(UsageError) -> JSONValue {
        guard let type = types[key] else { return .string(text) }
        switch type {
        case "string", "any", "…": return .string(text)
        case "integer":
            // As JSON writes one: no sign but '-', no leading zeros, nothing past Int64.
            if case .int(let integer)? = try? JSONParser.parse(text) { return .int(integer) }
            throw UsageError("\(subject): field '\(key)' is an integer; '\(text)' is not one")
        case "number":
            switch try? JSONParser.parse(text) {
            case .int(let integer)?: return .int(integer)
            case .double(let number)?: return .double(number)
            default:
                throw UsageError(
                    "\(subject): field '\(key)' is a number; '\(text)' is not one")
            }
        case "bool", "boolean":
            if text == "true" { return .bool(true) }
            if text == "false" { return .bool(false) }
            throw UsageError("\(subject): field '\(key)' is a boolean (true or false); '\(text)' is not one")
        case "null":
            guard text == "null" else {
                throw UsageError("\(subject): field '\(key)' is null; '\(text)' is not")
            }
            return .null
        default:
            let named = type == "object" ? "an object" : type
            throw UsageError("\(subject): field '\(key)' is \(named); give it as JSON: \(key):='…'")
        }
    }

    /// Checks that `payload` holds every required field.
    /// - Throws: ``UsageError`` naming each missing field, its type and how to give it.
    func checkRequired(in payload: JSONValue) throws(UsageError) {
        let given = payload.objectValue ?? [:]
        let missing = required.filter { given[$0] == nil }.sorted()
        guard !missing.isEmpty else { return }
        let named = missing.map { "'\($0)' (\(types[$0] ?? "any"))" }.joined(separator: ", ")
        let example = missing.map { name in
            let type = types[name] ?? "any"
            return type.hasPrefix("[") || type.hasPrefix("{") ? "\(name):='…'" : "\(name)=…"
        }.joined(separator: " ")
        throw UsageError(
            "\(subject) needs the field\(missing.count == 1 ? "" : "s") \(named): give \(missing.count == 1 ? "it" : "them") as \(example)"
        )
    }
}

import Foundation
import Lifeline
import LifelineProtocol
import LifelineSupport

/// Text helpers of the CLI: payload arguments, tables, durations.
enum TextFormat {
    /// Builds a payload object from `key=value` (a string, or the type `fields` declares for the key),
    /// `key:=json` (any JSON) arguments, or one argument holding a whole JSON object.
    static func payload(_ arguments: [String], fields: DeclaredFields? = nil) throws(UsageError) -> JSONValue
    {
        if arguments.count == 1, arguments[0].hasPrefix("{") {
            do {
                let value = try JSONParser.parse(arguments[0])
                guard case .object = value else { throw UsageError("the payload must be a JSON object") }
                return value
            } catch let error as JSONParseError {
                throw UsageError("the payload is not JSON: \(error)")
            } catch {
                throw UsageError("the payload must be a JSON object")
            }
        }
        var members: [String: JSONValue] = [:]
        for argument in arguments {
            let key = argument.split(separator: "=", maxSplits: 1).first.map {
                String($0.hasSuffix(":") ? $0.dropLast() : $0)
            }
            if let key, !key.isEmpty, members[key] != nil { throw UsageError("'\(key)' is given twice") }
            if let range = argument.range(of: ":="), !argument[..<range.lowerBound].contains("=") {
                let key = String(argument[..<range.lowerBound])
                do {
                    members[key] = try JSONParser.parse(String(argument[range.upperBound...]))
                } catch {
                    throw UsageError("the value of '\(key)' is not JSON: \(error)")
                }
            } else if let equals = argument.firstIndex(of: "=") {
                let key = String(argument[..<equals])
                let text = String(argument[argument.index(after: equals)...])
                members[key] = try fields?.value(of: key, text) ?? .string(text)
            } else {
                throw UsageError("'\(argument)' is not key=value or key:=json")
            }
            if members.keys.contains("") { throw UsageError("'\(argument)' has an empty key") }
        }
        return .object(members)
    }

    /// Whether `argument` reads as `key=value` or `key:=json` (a key without quotes or brackets).
    static func isPair(_ argument: String) -> Bool {
        guard let equals = argument.firstIndex(of: "=") else { return false }
        let key = argument[..<equals]
        return !key.isEmpty && !key.contains { "\"{}[] ".contains($0) }
    }

    /// Whether `arguments` hold a `key=value` one (not `key:=json`), whose value takes its field's
    /// declared type.
    static func hasPlainPairs(_ arguments: [String]) -> Bool {
        arguments.contains { argument in
            argument.firstIndex(of: "=").map { !argument[..<$0].hasSuffix(":") } ?? false
        }
    }

    /// Reads `EVENT [key=value ...]` for `command` and checks the event as the broker will. A
    /// `key=value` takes the type of the field the catalogue (a built-in event) or `described` (a
    /// custom one: what registered services describe) declares. Given as pairs or not at all, a
    /// custom event's payload must also hold every field its describers require (`described` is
    /// asked then, `needed` false: its failure only skips that check); one JSON object is sent as
    /// it is.
    /// - Throws: ``UsageError`` for a bad event, payload or field value, a required field left
    ///   out, or what `described` throws when a `key=value` needs it.
    static func event(
        _ arguments: inout CommandLineArguments, for command: String,
        described: (EventName, _ needed: Bool) throws -> DeclaredFields? = { _, _ in nil }
    ) throws -> (EventName, JSONValue) {
        guard let name = arguments.positional() else { throw UsageError("\(command) needs an EVENT") }
        let pairs = arguments.remainingPositionals()
        try arguments.finish()
        let event: EventName
        do { event = try EventCatalog.validateName(name) } catch { throw UsageError(error.message) }
        let asPairs = !(pairs.count == 1 && pairs[0].hasPrefix("{"))
        let builtIn = DeclaredFields.builtIn(event)
        // Typing key=value needs the description; checking required fields only uses it when it can
        // be had (a key allowed to publish may not be allowed to list the services).
        let typed = hasPlainPairs(pairs)
        let fields =
            !asPairs ? nil : try builtIn ?? (typed ? described(event, true) : try? described(event, false))
        let payload = try payload(pairs, fields: fields)
        if builtIn == nil { try fields?.checkRequired(in: payload) }
        do {
            try EventCatalog.validatePublication(event, payload: payload)
            return (event, payload)
        } catch {
            throw UsageError(error.message)
        }
    }

    /// Left-aligned columns with two spaces between them.
    static func table(_ header: [String], _ rows: [[String]]) -> String {
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { row in
            row.enumerated().map { index, cell in
                index == row.count - 1
                    ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }

    /// `950ms`, `12.3s`, `4m05s`, `2h03m`.
    static func duration(milliseconds: Int64) -> String {
        if milliseconds < 1000 { return "\(milliseconds)ms" }
        if milliseconds < 60_000 { return String(format: "%.1fs", Double(milliseconds) / 1000) }
        let seconds = milliseconds / 1000
        if seconds < 3600 { return String(format: "%dm%02ds", seconds / 60, seconds % 60) }
        return String(format: "%dh%02dm", seconds / 3600, seconds % 3600 / 60)
    }

    /// Pretty-printed JSON with two-space indentation and sorted keys.
    static func pretty(_ value: JSONValue, indent: String = "") -> String {
        let inner = indent + "  "
        switch value {
        case .array(let elements) where !elements.isEmpty:
            return "[\n" + elements.map { inner + pretty($0, indent: inner) }.joined(separator: ",\n")
                + "\n\(indent)]"
        case .object(let members) where !members.isEmpty:
            let lines = members.keys.sorted().map { key in
                "\(inner)\(JSONValue.string(key)): \(pretty(members[key]!, indent: inner))"
            }
            return "{\n" + lines.joined(separator: ",\n") + "\n\(indent)}"
        default: return value.description
        }
    }
}

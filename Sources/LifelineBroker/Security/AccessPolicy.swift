import Foundation
import LifelineProtocol
import LifelineSupport
import ZeroMQ

/// Who may connect and what each key may do: the broker's policy file (`--policy FILE`).
///
/// ```json
/// {"keys": {"gateway": {"publicKey": "Z85…", "register": ["gateway", "account"],
///   "publish": ["com.example.*"], "subscribe": ["*"], "call": ["push.*"], "admin": false}}}
/// ```
///
/// The keys listed are the allow-list the ZAP handler checks at the handshake; a key may be given
/// inline (`publicKey`) or as a file (`publicKeyFile`, a `.pub` written by `lifeline keys new`,
/// relative to the policy file). Each rule is a list of patterns where `*` matches any run of
/// characters: service names for `register`, event names for `publish` and `subscribe`,
/// `service.method` for `call`. What a key is not granted it may not do.
package struct AccessPolicy: Sendable, Equatable {
    /// What one key may do.
    package struct Grant: Sendable, Equatable {
        package var name: String
        package var publicKey: String
        package var register: [String] = []
        package var publish: [String] = []
        package var subscribe: [String] = []
        package var call: [String] = []
        /// APPS changes (a host's own sessions excepted), BOOT start and run, REPLAY outside a
        /// registration; implies ``observe``.
        package var admin = false
        /// LIST, STATS (only what the key may subscribe to and call) and TRACE.
        package var observe = false
    }

    /// An action checked against a key's grant.
    package enum Action: Sendable, Equatable {
        case register(String)
        case publish(String)
        case subscribe(String)
        case call(service: String, method: String)
        case admin(String)
        case observe(String)
    }

    /// The grants, by key name.
    package private(set) var grants: [String: Grant] = [:]
    /// Key names by public key (the ZAP handler's allow-list).
    package private(set) var names: [String: String] = [:]

    static let fields = [
        "publicKey", "publicKeyFile", "register", "publish", "subscribe", "call", "admin", "observe",
    ]

    /// Reads the policy file at `path`; the error names the key and field that are wrong.
    package init(path: String) throws(ProtocolError) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ProtocolError(.badRequest, "cannot read the policy file \(path)")
        }
        let json: JSONValue
        do {
            json = try JSONParser.parse(Array(data))
            // A grant named twice would be decided by the last one, silently: refused instead.
            if let repeated = try JSONParser.firstRepeatedMember(in: Array(data)) {
                throw ProtocolError(.badRequest, "\(path): '\(repeated)' is given twice")
            }
        } catch let error as ProtocolError {
            throw error
        } catch {
            throw ProtocolError(.badRequest, "\(path) is not JSON: \(error)")
        }
        try self.init(json: json, directory: (path as NSString).deletingLastPathComponent, file: path)
    }

    /// Reads a policy document; `publicKeyFile`s are relative to `directory`.
    package init(json: JSONValue, directory: String = ".", file: String = "the policy") throws(ProtocolError)
    {
        guard case .object(let top) = json else {
            throw ProtocolError(.badRequest, "\(file): expected an object")
        }
        if let unknown = top.keys.first(where: { $0 != "keys" && $0 != "version" }) {
            throw ProtocolError(.badRequest, "\(file): unknown field '\(unknown)'; fields: version, keys")
        }
        guard case .object(let keys)? = top["keys"] else {
            throw ProtocolError(.badRequest, "\(file): 'keys' must be an object of key name → grant")
        }
        for (name, value) in keys.sorted(by: { $0.key < $1.key }) {
            let grant = try Self.grant(name, value, directory: directory, file: file)
            if let other = names[grant.publicKey] {
                throw ProtocolError(
                    .badRequest, "\(file): keys '\(other)' and '\(name)' have the same public key")
            }
            grants[name] = grant
            names[grant.publicKey] = name
        }
    }

    private static func grant(_ name: String, _ value: JSONValue, directory: String, file: String)
        throws(ProtocolError) -> Grant
    {
        let at = "\(file): keys.\(name)"
        guard !name.isEmpty, name.utf8.count <= 64,
            name.utf8.allSatisfy({ $0 < 128 && (isalnum(Int32($0)) != 0 || "._-".utf8.contains($0)) })
        else {
            throw ProtocolError(.badRequest, "\(at): a key name is 1–64 letters, digits, '.', '_' or '-'")
        }
        guard case .object(let members) = value else {
            throw ProtocolError(.badRequest, "\(at): expected an object")
        }
        if let unknown = members.keys.sorted().first(where: { !fields.contains($0) }) {
            throw ProtocolError(
                .badRequest, "\(at): unknown field '\(unknown)'; fields: \(fields.joined(separator: ", "))")
        }
        var key: String
        switch (members["publicKey"]?.stringValue, members["publicKeyFile"]?.stringValue) {
        case (let inline?, nil): key = inline
        case (nil, let path?):
            let full = path.hasPrefix("/") ? path : (directory as NSString).appendingPathComponent(path)
            do {
                key = try KeyFile.publicKey(full)
            } catch {
                throw ProtocolError(.badRequest, "\(at).publicKeyFile: \(error)")
            }
        default:
            throw ProtocolError(.badRequest, "\(at): give exactly one of 'publicKey' and 'publicKeyFile'")
        }
        key = key.trimmingCharacters(in: .whitespaces)
        guard CurveKeyPair.isKey(key) else {
            throw ProtocolError(.badRequest, "\(at): the public key must be 40 Z85 characters")
        }
        var grant = Grant(name: name, publicKey: key)
        func patterns(_ field: String) throws(ProtocolError) -> [String] {
            guard let value = members[field] else { return [] }
            guard let list = value.arrayValue, list.allSatisfy({ $0.stringValue?.isEmpty == false }) else {
                throw ProtocolError(.badRequest, "\(at).\(field): expected a list of patterns (strings)")
            }
            return list.compactMap(\.stringValue)
        }
        grant.register = try patterns("register")
        grant.publish = try patterns("publish")
        grant.subscribe = try patterns("subscribe")
        grant.call = try patterns("call")
        for field in ["admin", "observe"] {
            guard let value = members[field] else { continue }
            guard let flag = value.boolValue else {
                throw ProtocolError(.badRequest, "\(at).\(field): expected true or false")
            }
            if field == "admin" { grant.admin = flag } else { grant.observe = flag }
        }
        return grant
    }

    /// The grant of the key whose public key (Z85) is `publicKey`, if the policy lists it.
    package func grant(publicKey: String) -> Grant? { names[publicKey].flatMap { grants[$0] } }

    /// Why the key whose public key is `publicKey` may not do `action`; nil when it may.
    package func denial(publicKey: String, _ action: Action) -> String? {
        guard let name = names[publicKey] else { return "key \(publicKey) is not in the policy any more" }
        return denial(name, action)
    }

    /// Why `key` may not do `action` (naming the key, the action and the rule); nil when it may.
    package func denial(_ key: String, _ action: Action) -> String? {
        guard let grant = grants[key] else { return "key '\(key)' is not in the policy any more" }
        let (verb, subject, rule): (String, String, [String])
        switch action {
        case .register(let name): (verb, subject, rule) = ("register", name, grant.register)
        case .publish(let event): (verb, subject, rule) = ("publish", event, grant.publish)
        case .subscribe(let event): (verb, subject, rule) = ("subscribe to", event, grant.subscribe)
        case .call(let service, let method):
            (verb, subject, rule) = ("call", "\(service).\(method)", grant.call)
        case .admin(let what):
            return grant.admin ? nil : "key '\(key)' may not \(what): its rule 'admin' is false"
        case .observe(let what):
            return grant.admin || grant.observe
                ? nil : "key '\(key)' may not \(what): its rules 'observe' and 'admin' are false"
        }
        if rule.contains(where: { Self.matches($0, subject) }) { return nil }
        let field: String
        switch action {
        case .register: field = "register"
        case .publish: field = "publish"
        case .subscribe: field = "subscribe"
        default: field = "call"
        }
        let shown = rule.isEmpty ? "[] (nothing)" : "[\(rule.joined(separator: ", "))]"
        return "key '\(key)' may not \(verb) '\(subject)': its rule '\(field)' is \(shown)"
    }

    /// True when `pattern` (where `*` matches any run of characters) matches all of `text`.
    package static func matches(_ pattern: String, _ text: String) -> Bool {
        let pattern = Array(pattern.utf8)
        let text = Array(text.utf8)
        var p = 0
        var t = 0
        var star: Int?
        var resume = 0
        while t < text.count {
            if p < pattern.count, pattern[p] == UInt8(ascii: "*") {
                star = p
                resume = t
                p += 1
            } else if p < pattern.count, pattern[p] == text[t] {
                p += 1
                t += 1
            } else if let star {
                p = star + 1
                resume += 1
                t = resume
            } else {
                return false
            }
        }
        while p < pattern.count, pattern[p] == UInt8(ascii: "*") { p += 1 }
        return p == pattern.count
    }

    /// What `key` may do, in a few lines (for `lifeline policy check`).
    package func explain(_ key: String) -> [String] {
        guard let grant = grants[key] else { return ["no key '\(key)' in the policy"] }
        func list(_ patterns: [String]) -> String {
            patterns.isEmpty ? "nothing" : patterns.joined(separator: ", ")
        }
        return [
            "key '\(key)' (\(grant.publicKey)):",
            "  register:  \(list(grant.register))",
            "  publish:   \(list(grant.publish))",
            "  subscribe: \(list(grant.subscribe))",
            "  call:      \(list(grant.call))",
            "  admin:     \(grant.admin ? "yes (apps changes, boot start/run, replay, list, stats, trace)" : "no")",
            "  observe:   \(grant.admin || grant.observe ? "yes (list, stats, trace)" : "no")",
        ]
    }
}

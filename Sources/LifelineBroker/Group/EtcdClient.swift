import Foundation
import LifelineProtocol
import LifelineSupport

/// etcd's v3 API over its JSON gateway (`POST /v3/…`, keys and values in base64, 64-bit numbers as
/// strings): the few calls a broker group needs — leases, a put-if-absent transaction, reads,
/// compare-and-delete. Blocking: called from the group's etcd thread only. Each call tries the
/// endpoints in turn, starting with the one that answered last.
package final class EtcdClient {
    /// A key's value and revisions.
    package struct Entry: Equatable, Sendable {
        package var value: [UInt8]
        /// The revision that created the key: a leader key's term.
        package var createRevision: UInt64
        package var lease: Int64
    }

    package let endpoints: [String]
    private var current = 0
    private let timeout: Duration

    /// - Parameter endpoints: `http://HOST:PORT` of etcd members.
    package init(endpoints: [String], timeout: Duration = .seconds(1)) {
        self.endpoints = endpoints
        self.timeout = timeout
    }

    /// A new lease; returns its id and the TTL etcd granted (it may raise a short one).
    /// - Throws: ``EtcdError`` when no endpoint answered or etcd refused.
    package func grantLease(seconds: Int) throws(EtcdError) -> (id: Int64, ttl: Int) {
        let answer = try call("/v3/lease/grant", ["TTL": .string(String(seconds))])
        guard let id = Self.int(answer["ID"]), let ttl = Self.int(answer["TTL"]) else {
            throw EtcdError("etcd granted no lease: \(answer)")
        }
        return (id, Int(ttl))
    }

    /// Renews `lease`; returns the TTL left, 0 when the lease is gone.
    /// - Throws: ``EtcdError`` when no endpoint answered.
    package func keepAlive(_ lease: Int64) throws(EtcdError) -> Int {
        let answer = try call("/v3/lease/keepalive", ["ID": .string(String(lease))])
        return Int(Self.int(answer["result"]?["TTL"]) ?? 0)
    }

    /// Revokes `lease` (its keys go with it); a lease already gone is not an error.
    /// - Throws: ``EtcdError`` when no endpoint answered.
    package func revoke(_ lease: Int64) throws(EtcdError) {
        do {
            _ = try call("/v3/lease/revoke", ["ID": .string(String(lease))])
        } catch  where error.code == 5 {
            return
        }
    }

    /// Puts `value` at `key` only if the key does not exist. Returns true and the key's creation
    /// revision when it was put; false and the entry that holds the key when it was not.
    /// - Throws: ``EtcdError`` when no endpoint answered or etcd refused.
    package func createIfAbsent(_ key: String, _ value: [UInt8], lease: Int64 = 0) throws(EtcdError)
        -> (created: Bool, entry: Entry)
    {
        var put: [String: JSONValue] = [
            "key": .string(Self.base64(key)), "value": .string(Self.base64(value)),
        ]
        if lease != 0 { put["lease"] = .string(String(lease)) }
        let answer = try call(
            "/v3/kv/txn",
            [
                "compare": .array([
                    ["target": "CREATE", "key": .string(Self.base64(key)), "createRevision": "0"]
                ]),
                "success": .array([["requestPut": .object(put)]]),
                "failure": .array([["requestRange": ["key": .string(Self.base64(key))]]]),
            ])
        if answer["succeeded"]?.boolValue == true {
            let revision = Self.int(answer["header"]?["revision"]).map(UInt64.init) ?? 0
            return (true, Entry(value: value, createRevision: revision, lease: lease))
        }
        let kvs = answer["responses"]?.arrayValue?.first?["response_range"]?["kvs"]
        guard let held = kvs?.arrayValue?.first.flatMap(Self.entry) else {
            // Deleted between the compare and the range: the caller tries again.
            throw EtcdError("the key \(key) changed while it was being created; try again")
        }
        return (false, held)
    }

    /// The entry at `key`, or nil when there is none.
    /// - Throws: ``EtcdError`` when no endpoint answered.
    package func get(_ key: String) throws(EtcdError) -> Entry? {
        let answer = try call("/v3/kv/range", ["key": .string(Self.base64(key))])
        return answer["kvs"]?.arrayValue?.first.flatMap(Self.entry)
    }

    /// Puts `value` at `key` (attached to `lease` when not 0).
    /// - Throws: ``EtcdError`` when no endpoint answered or etcd refused.
    package func put(_ key: String, _ value: [UInt8], lease: Int64 = 0) throws(EtcdError) {
        var body: [String: JSONValue] = [
            "key": .string(Self.base64(key)), "value": .string(Self.base64(value)),
        ]
        if lease != 0 { body["lease"] = .string(String(lease)) }
        _ = try call("/v3/kv/put", body)
    }

    /// Deletes `key` only while it was created at `createRevision`; returns whether it did.
    /// - Throws: ``EtcdError`` when no endpoint answered.
    package func delete(_ key: String, ifCreatedAt createRevision: UInt64) throws(EtcdError) -> Bool {
        let answer = try call(
            "/v3/kv/txn",
            [
                "compare": .array([
                    [
                        "target": "CREATE", "key": .string(Self.base64(key)),
                        "createRevision": .string(String(createRevision)),
                    ]
                ]),
                "success": .array([["requestDeleteRange": ["key": .string(Self.base64(key))]]]),
            ])
        return answer["succeeded"]?.boolValue == true
    }

    private func call(_ path: String, _ body: [String: JSONValue]) throws(EtcdError) -> JSONValue {
        var reasons: [String] = []
        for attempt in 0..<endpoints.count {
            let index = (current + attempt) % endpoints.count
            let url = endpoints[index] + path
            let answer: HTTPClient.Answer
            do {
                answer = try HTTPClient.post(url, body: JSONWriter.encode(.object(body)), timeout: timeout)
            } catch {
                reasons.append(error.message)
                continue
            }
            current = index
            let json = (try? JSONParser.parse(answer.body)) ?? .null
            if answer.status != 200 || json["error"] != nil {
                let message =
                    json["message"]?.stringValue ?? String(decoding: answer.body.prefix(200), as: UTF8.self)
                throw EtcdError(
                    "etcd at \(endpoints[index]) refused \(path): \(message)",
                    code: Int(Self.int(json["code"]) ?? 0))
            }
            return json
        }
        throw EtcdError("no etcd answered (\(reasons.joined(separator: "; ")))", unreachable: true)
    }

    private static func entry(_ kv: JSONValue) -> Entry? {
        let value = kv["value"]?.stringValue.flatMap { Data(base64Encoded: $0) } ?? Data()
        return Entry(
            value: Array(value), createRevision: UInt64(int(kv["create_revision"]) ?? 0),
            lease: int(kv["lease"]) ?? 0)
    }

    private static func int(_ value: JSONValue?) -> Int64? {
        switch value {
        case .string(let text): Int64(text)
        default: value?.intValue
        }
    }

    private static func base64(_ text: String) -> String { Data(text.utf8).base64EncodedString() }
    private static func base64(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }
}

/// What went wrong talking to etcd, in a sentence that names where.
package struct EtcdError: Error, Sendable, CustomStringConvertible {
    package var message: String
    /// The gRPC code etcd answered with (5: not found), 0 when none.
    package var code: Int
    /// No endpoint could be reached at all.
    package var unreachable: Bool

    package init(_ message: String, code: Int = 0, unreachable: Bool = false) {
        self.message = message
        self.code = code
        self.unreachable = unreachable
    }

    package var description: String { message }
}

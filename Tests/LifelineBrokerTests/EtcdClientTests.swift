import Foundation
import LifelineProtocol
import LifelineSupport
import Testing

@testable import LifelineBroker

@Suite("The etcd client against a scripted etcd gateway", .timeLimit(.minutes(1)))
struct EtcdClientTests {
    static func ok(_ json: String) -> ScriptedHTTPPeer.Step { .answer(ScriptedHTTPPeer.answer(200, json)) }

    /// The JSON body of the peer's request `index`.
    static func body(_ peer: ScriptedHTTPPeer, _ index: Int) throws -> JSONValue {
        try JSONParser.parse(peer.requests[index].body)
    }

    @Test(
        "leases: granted with 64-bit numbers as strings, renewed (TTL left, 0 once gone), revoked (gone is fine)"
    )
    func leases() throws {
        let peer = try ScriptedHTTPPeer([
            Self.ok(#"{"header":{},"ID":"7587868233216917512","TTL":"5"}"#),
            .answer(
                ScriptedHTTPPeer.chunked(200, [#"{"result":{"ID":"7587868233216917512","#, #""TTL":"3"}}"#])),
            Self.ok(#"{"result":{"ID":"7587868233216917512"}}"#),
            .answer(
                ScriptedHTTPPeer.answer(
                    404,
                    #"{"error":"etcdserver: requested lease not found","code":5,"message":"etcdserver: requested lease not found"}"#
                )),
        ])
        defer { peer.stop() }
        let etcd = EtcdClient(endpoints: [peer.url])
        let lease = try etcd.grantLease(seconds: 2)
        #expect(lease.id == 7_587_868_233_216_917_512 && lease.ttl == 5)
        #expect(try Self.body(peer, 0) == ["TTL": "2"])
        #expect(peer.requests[0].path == "/v3/lease/grant")
        #expect(try etcd.keepAlive(lease.id) == 3, "a chunked answer")
        #expect(try Self.body(peer, 1) == ["ID": "7587868233216917512"])
        #expect(try etcd.keepAlive(lease.id) == 0, "the lease is gone: no TTL")
        try etcd.revoke(lease.id)
        #expect(
            peer.requests.map(\.path) == [
                "/v3/lease/grant", "/v3/lease/keepalive", "/v3/lease/keepalive", "/v3/lease/revoke",
            ])
    }

    @Test(
        "a key is created only when absent: created with its revision, or the holder's entry; a compare-and-delete"
    )
    func createIfAbsent() throws {
        let leader = Data("a".utf8).base64EncodedString()
        let peer = try ScriptedHTTPPeer([
            Self.ok(#"{"header":{"revision":"41"},"succeeded":true}"#),
            Self.ok(
                #"{"header":{"revision":"42"},"responses":[{"response_range":{"kvs":[{"key":"bGVhZGVy","value":"\#(leader)","create_revision":"17","lease":"9"}]}}]}"#
            ),
            Self.ok(#"{"header":{},"responses":[{"response_range":{}}]}"#),
            Self.ok(#"{"header":{},"succeeded":true}"#),
        ])
        defer { peer.stop() }
        let etcd = EtcdClient(endpoints: [peer.url])
        let created = try etcd.createIfAbsent("leader", Array("b".utf8), lease: 7)
        #expect(
            created.created && created.entry == .init(value: Array("b".utf8), createRevision: 41, lease: 7))
        let request = try Self.body(peer, 0)
        #expect(
            request["compare"]?.arrayValue?.first?["target"] == "CREATE"
                && request["compare"]?.arrayValue?.first?["createRevision"] == "0")
        #expect(request["success"]?.arrayValue?.first?["requestPut"]?["lease"] == "7")
        #expect(
            request["success"]?.arrayValue?.first?["requestPut"]?["key"]
                == .string(Data("leader".utf8).base64EncodedString()))
        let held = try etcd.createIfAbsent("leader", Array("b".utf8))
        #expect(!held.created && held.entry == .init(value: Array("a".utf8), createRevision: 17, lease: 9))
        #expect(throws: EtcdError.self, "deleted between the compare and the range") {
            try etcd.createIfAbsent("leader", Array("b".utf8))
        }
        #expect(try etcd.delete("leader", ifCreatedAt: 17))
        #expect(try Self.body(peer, 3)["compare"]?.arrayValue?.first?["createRevision"] == "17")
    }

    @Test(
        "a refusal names the endpoint, the call and etcd's message, with its code; a renewal that fails is unreachable"
    )
    func failures() throws {
        let peer = try ScriptedHTTPPeer([
            .answer(
                ScriptedHTTPPeer.answer(400, #"{"error":"bad","code":3,"message":"etcdserver: bad request"}"#)
            ),
            .answer(ScriptedHTTPPeer.answer(503, "not json")),
            .silence,
        ])
        defer { peer.stop() }
        let etcd = EtcdClient(endpoints: [peer.url], timeout: .milliseconds(300))
        do {
            _ = try etcd.get("k")
            Issue.record("no error")
        } catch {
            #expect(error.message == "etcd at \(peer.url) refused /v3/kv/range: etcdserver: bad request")
            #expect(error.code == 3 && !error.unreachable)
        }
        do {
            try etcd.put("k", [1])
            Issue.record("no error")
        } catch {
            #expect(error.message == "etcd at \(peer.url) refused /v3/kv/put: not json")
        }
        do {
            _ = try etcd.keepAlive(7)
            Issue.record("a silent etcd renewed the lease")
        } catch {
            #expect(error.unreachable)
            #expect(
                error.message
                    == "no etcd answered (\(peer.url)/v3/lease/keepalive did not answer within 0.3 seconds)")
        }
    }

    @Test("the endpoints are tried in turn, and the one that answered is asked first next time")
    func endpoints() throws {
        let down = "http://127.0.0.1:\(try freePort())"
        let peer = try ScriptedHTTPPeer([Self.ok(#"{"kvs":[]}"#), Self.ok(#"{}"#)])
        defer { peer.stop() }
        let etcd = EtcdClient(endpoints: [down, peer.url], timeout: .seconds(1))
        #expect(try etcd.get("k") == nil)
        #expect(try etcd.get("k") == nil)
        #expect(peer.requests.count == 2)
        let none = EtcdClient(endpoints: [down], timeout: .seconds(1))
        do {
            _ = try none.get("k")
            Issue.record("no error")
        } catch {
            #expect(
                error.unreachable
                    && error.message.hasPrefix("no etcd answered (cannot connect to \(down)/v3/kv/range"))
        }
    }
}

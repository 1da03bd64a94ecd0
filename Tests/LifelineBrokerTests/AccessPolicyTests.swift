import Foundation
import LifelineProtocol
import LifelineSupport
import Testing

@testable import LifelineBroker

@Suite("The policy file: patterns, grants, and what is wrong with a bad one")
struct AccessPolicyTests {
    static let key = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7"
    static let other = "Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID"

    @Test("`*` matches any run of characters, anywhere in the pattern")
    func patterns() {
        let cases: [(String, String, Bool)] = [
            ("*", "anything.at.all", true), ("com.example.*", "com.example.push", true),
            ("com.example.*", "com.examples", false), ("gateway", "gateway", true),
            ("gateway", "gateways", false),
            ("*.signIn", "gateway.signIn", true), ("a*b*c", "aXXbYYc", true), ("a*b*c", "aXXbYY", false),
            ("", "", true), ("push.*", "push.", true),
        ]
        for (pattern, text, expected) in cases {
            #expect(AccessPolicy.matches(pattern, text) == expected, "\(pattern) ~ \(text)")
        }
    }

    @Test("a grant allows what its rules match and nothing else; a denial names key, action and rule")
    func grants() throws {
        let policy = try AccessPolicy(json: [
            "keys": [
                "gw": [
                    "publicKey": .string(Self.key), "register": ["gateway", "account"],
                    "publish": ["com.example.*"],
                    "subscribe": ["*"], "call": ["push.*"],
                ],
                "ops": ["publicKey": .string(Self.other), "admin": true],
            ]
        ])
        #expect(policy.names == [Self.key: "gw", Self.other: "ops"])
        #expect(policy.denial("gw", .register("account")) == nil)
        #expect(
            policy.denial("gw", .register("billing"))
                == "key 'gw' may not register 'billing': its rule 'register' is [gateway, account]")
        #expect(policy.denial("gw", .publish("com.example.ping")) == nil)
        #expect(policy.denial("gw", .call(service: "push", method: "register")) == nil)
        #expect(
            policy.denial("gw", .call(service: "gateway", method: "signIn"))
                == "key 'gw' may not call 'gateway.signIn': its rule 'call' is [push.*]")
        #expect(
            policy.denial("gw", .admin("start or run boot tasks"))?.contains("its rule 'admin' is false")
                == true)
        #expect(policy.denial("ops", .admin("start or run boot tasks")) == nil)
        #expect(
            policy.denial("ops", .publish("x"))
                == "key 'ops' may not publish 'x': its rule 'publish' is [] (nothing)")
        #expect(policy.denial("gone", .publish("x")) == "key 'gone' is not in the policy any more")
        #expect(policy.explain("gw").contains("  call:      push.*"))
    }

    @Test(
        "a call to an actor by key is granted against service/key.method: 'cart/*' reaches every key, 'cart.*' none"
    )
    func keyedCalls() throws {
        let policy = try AccessPolicy(json: [
            "keys": [
                "shop": ["publicKey": .string(Self.key), "call": ["cart/*"]],
                "old": ["publicKey": .string(Self.other), "call": ["cart.*", "cart/ana.contents"]],
            ]
        ])
        #expect(policy.denial("shop", .call(service: "cart/ana", method: "add")) == nil)
        #expect(policy.denial("shop", .call(service: "cart/ana/2024", method: "remove")) == nil)
        #expect(policy.denial("shop", .call(service: "cart", method: "health")) != nil, "the service itself")
        #expect(policy.denial("old", .call(service: "cart/ana", method: "add")) != nil)
        #expect(policy.denial("old", .call(service: "cart/ana", method: "contents")) == nil)
        #expect(policy.denial("old", .call(service: "cart/bob", method: "contents")) != nil)
    }

    @Test("'observe' grants STATS and TRACE, 'admin' implies it; a grant is found by its public key")
    func observe() throws {
        let policy = try AccessPolicy(json: [
            "keys": [
                "watcher": ["publicKey": .string(Self.key), "observe": true],
                "ops": ["publicKey": .string(Self.other), "admin": true],
            ]
        ])
        #expect(policy.denial(publicKey: Self.key, .observe("read STATS")) == nil)
        #expect(policy.denial(publicKey: Self.other, .observe("read STATS")) == nil)
        #expect(
            policy.denial(publicKey: Self.key, .admin("start or run boot tasks"))
                == "key 'watcher' may not start or run boot tasks: its rule 'admin' is false")
        #expect(policy.grant(publicKey: Self.key)?.name == "watcher")
        #expect(
            policy.denial(publicKey: "unknown", .observe("x")) == "key unknown is not in the policy any more")
        #expect(throws: ProtocolError.self) {
            try AccessPolicy(json: ["keys": ["w": ["publicKey": .string(Self.key), "observe": "yes"]]])
        }
    }

    @Test("/metrics takes only the bearer token it was given")
    func metricsToken() {
        func request(_ headers: String) -> HTTPRequest {
            (try? HTTPRequest.parse(head: "GET /metrics HTTP/1.1\r\n\(headers)"))
                ?? HTTPRequest(method: "", target: "", path: "", query: [:], headers: [:], body: [])
        }
        #expect(MetricsServer.authorizes(request("Authorization: Bearer s3cret\r\n"), token: "s3cret"))
        #expect(MetricsServer.authorizes(request("authorization:   bearer s3cret \r\n"), token: "s3cret"))
        #expect(!MetricsServer.authorizes(request("Authorization: Bearer s3cre\r\n"), token: "s3cret"))
        #expect(!MetricsServer.authorizes(request("Authorization: Bearer s3crets\r\n"), token: "s3cret"))
        #expect(!MetricsServer.authorizes(request("Authorization: Basic czNjcmV0\r\n"), token: "s3cret"))
        #expect(!MetricsServer.authorizes(request("Host: x\r\n"), token: "s3cret"))
    }

    @Test("a bad policy is refused with the key and field that are wrong")
    func refusals() {
        let cases: [(JSONValue, String)] = [
            (
                ["keys": ["gw": ["publicKey": .string(Self.key), "publsh": []]]],
                "keys.gw: unknown field 'publsh'"
            ),
            (["keys": ["gw": ["publicKey": "short"]]], "keys.gw: the public key must be 40 Z85 characters"),
            (["keys": ["gw": [:]]], "keys.gw: give exactly one of 'publicKey' and 'publicKeyFile'"),
            (
                ["keys": ["gw": ["publicKey": .string(Self.key), "call": "push.*"]]],
                "keys.gw.call: expected a list"
            ),
            (
                ["keys": ["gw": ["publicKey": .string(Self.key), "admin": "yes"]]],
                "keys.gw.admin: expected true or false"
            ),
            (["keys": ["a b": ["publicKey": .string(Self.key)]]], "a key name is 1–64 letters"),
            (
                ["keys": ["a": ["publicKey": .string(Self.key)], "b": ["publicKey": .string(Self.key)]]],
                "keys 'a' and 'b' have the same public key"
            ),
            (["keys": [:], "extra": 1], "unknown field 'extra'"),
            (
                ["keys": ["gw": ["publicKeyFile": "/nonexistent/gw.pub"]]],
                "keys.gw.publicKeyFile: cannot read the key file /nonexistent/gw.pub"
            ),
        ]
        for (json, message) in cases {
            #expect {
                _ = try AccessPolicy(json: json)
            } throws: { error in
                (error as? ProtocolError)?.message.contains(message) == true
            }
        }
    }

    @Test(
        "a policy file that names a key or a field twice is refused, naming it: the last would win silently")
    func repeatedMembers() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "policy-\(UInt64.random(in: 0...UInt64.max)).json"
        ).path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let texts = [
            (
                #"{"keys": {"gw": {"publicKey": "\#(Self.key)", "admin": false, "admin": true}}}"#,
                "'keys.gw.admin' is given twice"
            ),
            (
                #"{"keys": {"gw": {"publicKey": "\#(Self.key)"}, "gw": {"publicKey": "\#(Self.other)"}}}"#,
                "'keys.gw' is given twice"
            ),
        ]
        for (text, message) in texts {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            #expect {
                _ = try AccessPolicy(path: path)
            } throws: { error in
                (error as? ProtocolError)?.message == "\(path): \(message)"
            }
        }
        try Data(#"{"keys": {"gw": {"publicKey": "\#(Self.key)", "admin": true}}}"#.utf8).write(
            to: URL(fileURLWithPath: path))
        #expect(try AccessPolicy(path: path).names == [Self.key: "gw"])
    }

    @Test(
        "STATS shows a keyed method to a key that may call it for some key (cart/ana.*), not to one with cart.m"
    )
    func keyedStatsVisibility() {
        let cases: [(String, Bool)] = [
            ("cart/ana.*", true), ("cart/*", true), ("*", true), ("cart/*.contents", true),
            ("cart/ana.contents", true), ("cart/ana.add", false), ("cart.contents", false), ("pay/*", false),
        ]
        for (pattern, visible) in cases {
            #expect(
                Broker.mayCallForSomeKey(pattern, service: "cart", method: "contents") == visible,
                "\(pattern)")
        }
    }

    @Test("the broker checks every request against the key it came with: 403, logged, not counted")
    func brokerChecks() throws {
        var broker = BrokerHarness()
        let policy = try AccessPolicy(json: [
            "keys": ["gw": ["publicKey": .string(Self.key), "register": ["gateway"], "subscribe": ["did*"]]]
        ])
        var output: [BrokerOutput] = []
        broker.core.apply(policy, now: broker.instant, into: &output)
        let publish = ControlRequest(
            .publish, requestID: Array("p1".utf8), header: ["event": "didBecomeActive"])
        broker.output.removeAll()
        broker.core.handleControl(
            peer: Array("gw".utf8), frames: publish.frames()[...], key: Self.key, now: broker.instant,
            into: &broker.output)
        let denied = try #require(broker.replies(to: "gw").first)
        #expect(denied.status == .forbidden)
        #expect(
            denied.errorMessage
                == "key 'gw' may not publish 'didBecomeActive': its rule 'publish' is [] (nothing)")
        #expect(broker.published.isEmpty)
        let outside = BrokerHarness.registration("billing", instance: "i1", events: ["didBecomeActive"])
        let register = ControlRequest(.register, requestID: Array("r1".utf8), header: outside)
        broker.output.removeAll()
        broker.core.handleControl(
            peer: Array("gw".utf8), frames: register.frames()[...], key: Self.key, now: broker.instant,
            into: &broker.output)
        #expect(broker.replies(to: "gw").first?.status == .forbidden)
        #expect(broker.core.serviceCount == 0)
    }
}

import Distributed
import LifelineProtocol
import Synchronization
import Testing

@testable import Lifeline

/// An actor with one of every kind of func the system meets.
distributed actor Calculator {
    typealias ActorSystem = LifelineActorSystem

    distributed func add(_ a: Int, to b: Int) -> Int { a + b }
    distributed func reset() {}
    distributed var total: Int { 0 }
    distributed func label(for value: Int, unit: String?) -> String { "\(value)\(unit ?? "")" }
    distributed func echo<T: Codable & Sendable>(_ value: T) -> T { value }
    distributed func fail(code: Int) throws -> Int { throw CalculatorError(code: code) }
}

struct CalculatorError: Error, Codable, Equatable {
    let code: Int
}

enum Registry {
    /// An actor nested in another type: its funcs are found by its mangled name.
    distributed actor Nested {
        typealias ActorSystem = LifelineActorSystem

        distributed func find(name: String) -> Int { name.count }

        /// A nested type's member is not the actor's.
        distributed actor Inner {
            typealias ActorSystem = LifelineActorSystem

            distributed func deeper() {}
        }
    }
}

/// A private type's mangled name is unique to its file: it cannot be hosted, and says so.
private distributed actor Hidden {
    typealias ActorSystem = LifelineActorSystem

    distributed func secret() -> Int { 1 }
}

struct Teapot: StatusReportingError, Codable {
    var status: Status { Status(rawValue: 418) }
}

/// Two funcs that would share the method `lookup`.
distributed actor Overloaded {
    typealias ActorSystem = LifelineActorSystem

    distributed func lookup(name: String) -> Int { 1 }
    distributed func lookup(id: Int) -> Int { 2 }
}

@Suite("Distributed actors: the function table, argument coding, errors, without sockets")
struct DistributedActorTests {
    @Test("a demangled target gives the method (its base name) and each argument's key")
    func functionNames() {
        let add = DistributedFunction(demangled: "Module.$Calculating.add(_:to:)")
        #expect(add?.method == "add" && add?.argumentKeys == ["0", "to"] && add?.signature == "add(_:to:)")
        #expect(DistributedFunction(demangled: "reset()")?.argumentKeys == [])
        #expect(DistributedFunction(demangled: "Module.Calculator.total()")?.method == "total")
        #expect(DistributedFunction(demangled: "$s6Module10CalculatorC3addyS2i_SitFTE") == nil)
    }

    @Test(
        "the table lists an actor's distributed funcs from the program's metadata; generic ones are skipped")
    func table() {
        #expect(DistributedFunctionTable.unreadable == nil)
        let listing = DistributedFunctionTable.listing(of: Calculator.self)
        #expect(
            listing.entries.map(\.function.signature) == [
                "add(_:to:)", "fail(code:)", "label(for:unit:)", "reset()", "total()",
            ])
        #expect(listing.skipped == ["echo(_:) (generic distributed funcs are not supported)"])
        #expect(listing.entries.allSatisfy { $0.identifier.hasPrefix("$s") && $0.identifier.hasSuffix("TE") })
    }

    @Test("an actor's ID from a literal or an interpolated string: its service and key")
    func actorIDs() {
        let user = "ana"
        let keyed: LifelineActorSystem.ActorID = "cart/\(user)"
        #expect(keyed == LifelineActorSystem.ActorID(service: "cart", key: "ana"))
        let plain: LifelineActorSystem.ActorID = "gateway"
        #expect(plain.service == "gateway" && plain.key == nil && "\(plain)" == "gateway")
    }

    @Test(
        "a service hosting the actor has a method per func; clashing names stop it with an error naming them")
    func serviceMethods() {
        let service = Service("calc").actor { Calculator(actorSystem: $0.actorSystem) }
        #expect(service.methods == ["add", "fail", "label", "reset", "total"])
        #expect(service.configurationProblems.isEmpty)
        #expect(
            service.hostingNotes == [
                "Calculator.echo(_:) (generic distributed funcs are not supported) is not served"
            ])
        let overloaded = Service("o").actor { Overloaded(actorSystem: $0.actorSystem) }
        #expect(
            overloaded.configurationProblems == [
                "Overloaded.lookup(id:) and lookup(name:) would both be the method 'lookup'; Lifeline names methods by base name: rename one"
            ])
        let clash = Service("c").method("add") { _ in .null }.actor {
            Calculator(actorSystem: $0.actorSystem)
        }
        #expect(
            clash.configurationProblems.first
                == "Calculator.add(_:to:) and the service's method 'add' share a name; rename one")
        let twice = service.actor { Overloaded(actorSystem: $0.actorSystem) }
        #expect(twice.configurationProblems.first?.hasPrefix("'calc' already hosts an actor") == true)
        let after = service.method("reset") { _ in .null }
        #expect(
            after.configurationProblems == [
                "Calculator.reset() and the service's method 'reset' share a name; rename one"
            ], "a method declared after the actor is caught too")
        #expect(Service("n").actor { Registry.Nested(actorSystem: $0.actorSystem) }.methods == ["find"])
        #expect(
            Service("h").actor { Hidden(actorSystem: $0.actorSystem) }.configurationProblems == [
                "found no distributed funcs of Hidden to serve; a private, fileprivate or generic actor type cannot be hosted (make it internal or public, not generic)"
            ])
    }

    @Test(
        "a remote call sends the base name and an object of the arguments by label, or position when unlabeled"
    )
    func callBodies() async throws {
        let sent = Mutex<[(String, String, JSONValue)]>([])
        let system = LifelineActorSystem(timeout: .seconds(1)) { service, method, body, _ in
            let tree = try JSONParser.parse(body)
            sent.withLock { $0.append((service, method, tree)) }
            return Array((method == "add" ? "5" : method == "label" ? #""3kg""# : "null").utf8)
        }
        let calculator = try Calculator.resolve(id: "calc", using: system)
        #expect(try await calculator.add(2, to: 3) == 5)
        #expect(try await calculator.label(for: 3, unit: nil) == "3kg")
        try await calculator.reset()
        let calls = sent.withLock { $0 }
        #expect(calls.map(\.0) == ["calc", "calc", "calc"])
        #expect(calls.map(\.1) == ["add", "label", "reset"])
        #expect(calls.map(\.2) == [["0": 2, "to": 3], ["for": 3], .emptyObject])
        await #expect(throws: LifelineError.self) { try await calculator.echo("x") }
        do {
            _ = try await calculator.echo(1)
        } catch let error as LifelineError {
            #expect(error.message == "echo(_:) is generic; generic distributed funcs are not supported")
        }
        #expect(sent.withLock { $0.count } == 3, "a generic func is refused before anything is sent")
    }

    @Test("the host decodes a body by key or position, and names what is wrong with it")
    func decoding() throws {
        let function = DistributedFunction(demangled: "label(for:unit:)")!
        var byKey = try LifelineActorSystem.InvocationDecoder(function: function, body: ["for": 3])
        #expect(try byKey.decodeNextArgument() as Int == 3)
        #expect(try byKey.decodeNextArgument() as String? == nil, "an optional argument may be left out")
        var byPosition = try LifelineActorSystem.InvocationDecoder(function: function, body: [4, "g"])
        #expect(try byPosition.decodeNextArgument() as Int == 4)
        #expect(try byPosition.decodeNextArgument() as String? == "g")
        var wrong = try LifelineActorSystem.InvocationDecoder(function: function, body: ["for": "three"])
        #expect(throws: PayloadDecodingError.self) { try wrong.decodeNextArgument() as Int }
        #expect(
            wrong.failure?.description
                == "cannot decode Int at for: expected an integer, found a string (\"three\")")
        #expect(throws: ServiceError.self) {
            try LifelineActorSystem.InvocationDecoder(function: function, body: [1])
        }
        do {
            _ = try LifelineActorSystem.InvocationDecoder(function: function, body: ["unitt": 1])
        } catch {
            #expect(
                error.message
                    == "label(for:unit:) takes for, unit; there is no argument 'unitt'; did you mean 'unit'?")
        }
    }

    @Test(
        "a Codable error crosses as its JSON and type name and is rethrown as that type; others keep the message"
    )
    func errors() throws {
        let function = DistributedFunction(demangled: "fail(code:)")!
        let reply = ActorErrorCoding.reply(for: CalculatorError(code: 7), from: function)
        #expect(reply.status == .internalError)
        let body = try JSONParser.parse(reply.body)
        #expect(body["type"] == .string(String(reflecting: CalculatorError.self)))
        #expect(body["value"] == ["code": 7])
        #expect(body["error"] == .string("\(CalculatorError(code: 7))"))
        func received(_ error: ServiceError) -> LifelineError {
            LifelineError(reply: ControlReply(requestID: [], status: error.status, body: error.body))
        }
        #expect(
            ActorErrorCoding.rethrown(received(reply)) { _ in CalculatorError.self } as? CalculatorError
                == CalculatorError(code: 7))
        #expect(
            ActorErrorCoding.rethrown(received(reply)) { _ in nil } is LifelineError, "a type not allowed")
        struct Opaque: Error {}
        let opaque = ActorErrorCoding.reply(for: Opaque(), from: function)
        let opaqueBody = try JSONParser.parse(opaque.body)
        #expect(opaqueBody["value"] == nil && opaqueBody["swiftType"] == nil)
        let plain = ActorErrorCoding.rethrown(received(opaque)) { _ in CalculatorError.self }
        #expect((plain as? LifelineError)?.code == .failed(.internalError))
        let own = ServiceError(.notFound, "no such total")
        #expect(ActorErrorCoding.reply(for: own, from: function).status == .notFound)
        #expect(ActorErrorCoding.reply(for: Teapot(), from: function).status.rawValue == 418)
    }

    @Test(
        "a remote error is rebuilt only as a type the caller registered; any other name arrives as a LifelineError"
    )
    func errorAllowList() async throws {
        struct Unlisted: Error, Codable, Equatable { var code: Int }
        let named = Mutex<String?>(nil)
        let system = LifelineActorSystem(timeout: .seconds(1)) { _, _, _, _ throws -> [UInt8] in
            let name = named.withLock { $0 } ?? _mangledTypeName(CalculatorError.self)!
            throw LifelineError(
                .internalError, "refused",
                body: ["type": "CalculatorError", "value": ["code": 7], "swiftType": .string(name)])
        }
        let calculator = try Calculator.resolve(id: "calc", using: system)
        do {
            _ = try await calculator.fail(code: 7)
            Issue.record("the call did not fail")
        } catch {
            #expect((error as? LifelineError)?.message == "refused", "not registered: \(error)")
        }
        system.registerErrors(CalculatorError.self)
        await #expect(throws: CalculatorError(code: 7), "registered") { try await calculator.fail(code: 7) }
        named.withLock { $0 = _mangledTypeName(Unlisted.self)! }
        do {
            _ = try await calculator.fail(code: 7)
            Issue.record("the call did not fail")
        } catch {
            #expect(error is LifelineError, "a type the remote side names but nobody allowed: \(error)")
        }
    }

    @Test(
        "the runtime's metadata sections have the one layout version the func table reads (pinned for this toolchain)"
    )
    func metadataLayoutIsPinned() {
        #expect(DistributedFunctionTable.versionsSeen == [DistributedFunctionTable.knownVersion])
        #expect(DistributedFunctionTable.knownVersion == 5)
        #expect(DistributedFunctionTable.unreadable == nil)
        #expect(
            DistributedFunctionTable.listing(of: Calculator.self).entries.count == 5,
            "add, reset, total, label, fail: echo is generic")
        // Each func's signature is read once from the runtime, so a call runs without demangling.
        #expect(DistributedFunctionTable.listing(of: Calculator.self).entries.allSatisfy { $0.target != nil })
    }

    @Test("a hosted actor is found locally by its service name; other actors of the system stay local")
    func localResolve() throws {
        let system = LifelineActorSystem(timeout: .seconds(1), textTransport: nil)
        let hosted = LifelineActorSystem.$hostingClaim.withValue(HostingClaim("calc")) {
            Calculator(actorSystem: system)
        }
        let other = Calculator(actorSystem: system)
        #expect(hosted.id == "calc" && other.id.service.hasPrefix("local."))
        #expect(try system.resolve(id: "calc", as: Calculator.self) === hosted)
        #expect(try system.resolve(id: "calc", as: Overloaded.self) == nil)
        system.resignID("calc")
        #expect(try system.resolve(id: "calc", as: Calculator.self) === hosted, "a live actor keeps its name")
    }

    @Test(
        "a func run by its signature read once answers what executeDistributedTarget answers: values, Void, failures, bad arguments"
    )
    func targetAgainstTheLibrary() async throws {
        let system = LifelineActorSystem(timeout: .seconds(1), textTransport: nil)
        let actor = Calculator(actorSystem: system)
        let bodies = [
            #"{"_0": 2, "to": 3}"#, #"[4, 5]"#, #"{"for": 7, "unit": "kg"}"#, #"{"for": 7}"#, #"{"code": 9}"#,
            #"{}"#, #"[]"#, #"{"for": "seven"}"#, #"[1, 2, 3]"#, #"{"_0": 9223372036854775807, "to": 1}"#,
            "not json",
        ]
        func outcome(_ entry: DistributedFunctionTable.Entry, _ body: String) async -> String {
            do {
                return String(
                    decoding: try await HostedActor<Calculator>.invoke(
                        entry, on: actor, text: Array(body.utf8)),
                    as: UTF8.self)
            } catch let error as ServiceError {
                return
                    "\(error.status.rawValue) \(error.message) \(String(decoding: error.body, as: UTF8.self))"
            } catch { return "\(error)" }
        }
        let entries = DistributedFunctionTable.listing(of: Calculator.self).entries
        #expect(entries.count == 5 && entries.allSatisfy { $0.target != nil })
        let (sum, failure) = (await outcome(entries[0], "[2, 3]"), await outcome(entries[1], #"{"code": 9}"#))
        #expect(
            sum == "5" && failure.hasPrefix("500 CalculatorError(code: 9)"), "answered, and failed as thrown")
        for entry in entries {
            let general = DistributedFunctionTable.Entry(
                function: entry.function, identifier: entry.identifier, target: nil)
            for body in bodies {
                let (fast, library) = (await outcome(entry, body), await outcome(general, body))
                #expect(fast == library, "\(entry.function.signature) with \(body)")
            }
        }
    }
}

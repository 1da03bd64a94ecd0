import LifelineProtocol
import LifelineSupport
import Testing

@testable import LifelineCLI

@Suite("key=value typed by the declared fields", .timeLimit(.minutes(1)))
struct DeclaredFieldsTests {
    @Test("a described shape's top-level members, nested ones and optional marks included")
    func members() {
        #expect(
            DeclaredFields.members(
                ofShape: #"{"user": string, "tags"?: [string], "at": {"x": number, "y": number}}"#)
                == ["user": "string", "tags": "[string]?", "at": #"{"x": number, "y": number}"#])
        #expect(DeclaredFields.members(ofShape: #"{"a,b": boolean}"#) == ["a,b": "boolean"])
        #expect(DeclaredFields.members(ofShape: "{}") == [:])
        #expect(DeclaredFields.members(ofShape: "[number]") == nil)
        #expect(DeclaredFields.members(ofShape: "") == nil)
    }

    @Test("each value takes its field's type, or is refused naming the field and the type")
    func values() throws {
        let fields = DeclaredFields(
            [
                "items": "number?", "urgent": "boolean", "note": "string", "tags": "[string]", "extra": "any",
                "userInfo": "object",
            ],
            subject: "event com.example.cart.didChange")
        #expect(try fields.value(of: "items", "3") == .int(3))
        #expect(try fields.value(of: "items", "2.5") == .double(2.5))
        #expect(try fields.value(of: "urgent", "true") == .bool(true))
        #expect(try fields.value(of: "note", "3") == .string("3"))
        #expect(try fields.value(of: "extra", "3") == .string("3"))
        #expect(try fields.value(of: "undeclared", "3") == .string("3"))
        #expect(
            throws: UsageError(
                "event com.example.cart.didChange: field 'items' is a number; 'three' is not one")
        ) {
            try fields.value(of: "items", "three")
        }
        #expect(
            throws: UsageError(
                "event com.example.cart.didChange: field 'items' is a number; 'nan' is not one")
        ) {
            try fields.value(of: "items", "nan")
        }
        // Numbers as JSON writes them, not as Swift's Double() reads them.
        for text in ["0x10", "+5", ".5", "5.", "00012", "1e400", "inf"] {
            #expect(throws: UsageError.self, "\(text)") { try fields.value(of: "items", text) }
        }
        #expect(try fields.value(of: "items", "-1.5e3") == .double(-1500))
        #expect(
            throws: UsageError(
                "event com.example.cart.didChange: field 'urgent' is a boolean (true or false); 'yes' is not one"
            )
        ) { try fields.value(of: "urgent", "yes") }
        #expect(
            throws: UsageError(
                "event com.example.cart.didChange: field 'tags' is [string]; give it as JSON: tags:='…'")
        ) { try fields.value(of: "tags", "a") }
        #expect(
            throws: UsageError(
                "event com.example.cart.didChange: field 'userInfo' is an object; give it as JSON: userInfo:='…'"
            )
        ) { try fields.value(of: "userInfo", "x") }
    }

    @Test("a payload of pairs: key=value typed, key:=json as given, strings where nothing is declared")
    func payload() throws {
        let fields = DeclaredFields(["items": "number"], subject: "event com.example.cart.didChange")
        #expect(
            try TextFormat.payload(["items=3", "note=3", "raw:=\"3\""], fields: fields)
                == ["items": 3, "note": "3", "raw": "3"])
        #expect(try TextFormat.payload(["items=3"]) == ["items": "3"])
        #expect(throws: UsageError("'items' is given twice")) {
            try TextFormat.payload(["items=3", "items:=4"])
        }
        #expect(TextFormat.isPair("items=3") && TextFormat.isPair("items:=3"))
        #expect(!TextFormat.isPair(#"{"a": "b=c"}"#) && !TextFormat.isPair("3"))
    }

    @Test("a built-in event's fields come from the catalogue")
    func builtIn() {
        let fields = DeclaredFields.builtIn(.openURL)
        #expect(fields?.types["url"] == "string")
        #expect(DeclaredFields.builtIn("com.example.cart.didChange") == nil)
    }

    @Test("an integer field takes whole numbers only")
    func integers() throws {
        let fields = DeclaredFields(["items": "integer"], subject: "cart.add")
        #expect(try fields.value(of: "items", "3") == .int(3))
        #expect(try fields.value(of: "items", "-9223372036854775808") == .int(.min))
        #expect(throws: UsageError("cart.add: field 'items' is an integer; '3.5' is not one")) {
            try fields.value(of: "items", "3.5")
        }
        #expect(throws: UsageError("cart.add: field 'items' is an integer; '1e3' is not one")) {
            try fields.value(of: "items", "1e3")
        }
    }

    @Test("a required field left out is refused, naming each with its type and how to give it")
    func required() throws {
        let fields = DeclaredFields(
            ["user": "string", "items": "integer", "tags": "[string]", "note": "string?"], subject: "cart.add"
        )
        #expect(fields.required == ["user", "items", "tags"])
        try fields.checkRequired(in: ["user": "ana", "items": 1, "tags": []])
        #expect(throws: UsageError("cart.add needs the field 'items' (integer): give it as items=…")) {
            try fields.checkRequired(in: ["user": "ana", "tags": [], "note": "x"])
        }
        #expect(
            throws: UsageError(
                "cart.add needs the fields 'items' (integer), 'tags' ([string]), 'user' (string): give them as items=… tags:='…' user=…"
            )
        ) { try fields.checkRequired(in: .null) }
    }

    @Test(
        "a custom event's fields: the union of its describers, required where every describer of the field requires it"
    )
    func describedUnion() throws {
        func service(_ name: String, _ fields: [String: String]) -> ServiceRecord {
            var registration = ServiceRegistration(
                name: name, instance: name, pid: 1, host: "h", events: ["com.example.added"], methods: [],
                attachToken: "")
            registration.description = ServiceDescription(
                events: ["com.example.added": .init(summary: "", fields: fields)])
            return ServiceRecord(
                registration: registration, registeredAtMilliseconds: 0, lastSeenMillisecondsAgo: 0,
                uptimeMilliseconds: 0)
        }
        let fields = DeclaredFields.described(
            "com.example.added",
            by: [
                service("a", ["items": "integer", "coupon": "string?"]),
                service("b", ["items": "integer", "coupon": "string", "user": "string"]),
            ])
        #expect(fields?.types == ["items": "integer", "coupon": "string", "user": "string"])
        #expect(fields?.required == ["items", "user"])
        #expect(fields?.subject == "event com.example.added")
        #expect(DeclaredFields.described("com.example.other", by: [service("a", ["x": "integer"])]) == nil)
    }

    @Test(
        "publish: pairs or no payload are checked against the description, one JSON object is sent as it is")
    func eventPayloads() throws {
        let described = DeclaredFields(["items": "integer"], subject: "event com.example.added")
        func read(_ words: [String]) throws -> JSONValue {
            var arguments = CommandLineArguments(["com.example.added"] + words, declaring: [])
            return try TextFormat.event(&arguments, for: "publish") { _, _ in described }.1
        }
        #expect(try read(["items=2"]) == ["items": 2])
        #expect(try read(["items:=2"]) == ["items": 2])
        #expect(
            throws: UsageError(
                "event com.example.added needs the field 'items' (integer): give it as items=…")
        ) {
            try read([])
        }
        #expect(
            throws: UsageError(
                "event com.example.added needs the field 'items' (integer): give it as items=…")
        ) {
            try read(["note=x"])
        }
        #expect(try read([#"{"note": "x"}"#]) == ["note": "x"])
    }

    @Test("a method's optional argument is not required; its required ones are")
    func optionalArguments() throws {
        var registration = ServiceRegistration(
            name: "svc", instance: "i1", pid: 1, host: "h", events: [], methods: ["tag"], attachToken: "")
        registration.description = ServiceDescription(
            methods: [
                "tag": .init(
                    summary: "", arguments: #"{"user": string, "tags"?: [string], "count"?: integer}"#)
            ])
        let service = ServiceRecord(
            registration: registration, registeredAtMilliseconds: 0, lastSeenMillisecondsAgo: 0,
            uptimeMilliseconds: 0)
        let fields = try #require(DeclaredFields.arguments(of: "tag", in: service))
        #expect(fields.required == ["user"])
        #expect(fields.types == ["user": "string", "tags": "[string]", "count": "integer"])
        try fields.checkRequired(in: ["user": "ana"])
        #expect(throws: UsageError("svc.tag needs the field 'user' (string): give it as user=…")) {
            try fields.checkRequired(in: ["count": 2])
        }
    }
}

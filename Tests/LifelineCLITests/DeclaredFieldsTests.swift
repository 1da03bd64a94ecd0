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
                == ["user": "string", "tags": "[string]", "at": #"{"x": number, "y": number}"#])
        #expect(DeclaredFields.members(ofShape: #"{"a,b": boolean}"#) == ["a,b": "boolean"])
        #expect(DeclaredFields.members(ofShape: "{}") == [:])
        #expect(DeclaredFields.members(ofShape: "[number]") == nil)
        #expect(DeclaredFields.members(ofShape: "") == nil)
    }

    @Test("each value takes its field's type, or is refused naming the field and the type")
    func values() throws {
        let fields = DeclaredFields(
            ["items": "number?", "urgent": "boolean", "note": "string", "tags": "[string]", "extra": "any"],
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
        #expect(
            throws: UsageError(
                "event com.example.cart.didChange: field 'urgent' is a boolean (true or false); 'yes' is not one"
            )
        ) { try fields.value(of: "urgent", "yes") }
        #expect(
            throws: UsageError(
                "event com.example.cart.didChange: field 'tags' is [string]; give it as JSON: tags:='…'")
        ) { try fields.value(of: "tags", "a") }
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
}

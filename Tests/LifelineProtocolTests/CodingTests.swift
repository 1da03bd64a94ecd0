import Testing

@testable import LifelineProtocol

@Suite("Codable over JSONValue: encode, decode with paths, and the outline of a type")
struct CodingTests {
    enum Kind: String, Codable, CaseIterable { case fruit, tool }
    enum Tier: String, Codable { case gold, silver }

    struct Item: Codable, Equatable {
        let id: Int
        var price: Double
        var tags: [String]
        var note: String?
        var kind: Kind
    }

    struct Cart: Codable, Equatable {
        var owner: String
        var items: [Item]
        var paid: Bool
        var extra: JSONValue
        var coupon: UInt8?
        var big: Int64
    }

    static let cart = Cart(
        owner: "ana",
        items: [
            Item(id: 1, price: 2.5, tags: ["a"], note: nil, kind: .fruit),
            Item(id: 2, price: 3, tags: [], note: "x", kind: .tool),
        ], paid: true, extra: ["any": [1, "two", nil]], coupon: 7, big: Int64.max)

    @Test("encode then decode gives the value back; nil optionals are left out; integers stay exact")
    func roundTrip() throws {
        let value = try JSONValueEncoder.encode(Self.cart)
        #expect(value["items"]?.arrayValue?[0]["note"] == nil, "a nil optional is absent")
        #expect(value["big"] == .int(Int64.max))
        #expect(value["extra"] == ["any": [1, "two", nil]])
        let bytes = JSONWriter.encode(value)
        #expect(try JSONValueDecoder.decode(Cart.self, from: bytes) == Self.cart)
    }

    @Test("what does not decode is named by type, path and reason")
    func errors() throws {
        var value = try JSONValueEncoder.encode(Self.cart)
        func failure(_ change: (inout [String: JSONValue]) -> Void) -> String {
            guard case .object(var members) = value else { return "" }
            change(&members)
            do {
                _ = try JSONValueDecoder.decode(Cart.self, from: .object(members))
                return "decoded"
            } catch {
                return error.description
            }
        }
        #expect(failure { $0["owner"] = nil } == "cannot decode Cart at owner: missing")
        #expect(
            failure { $0["items"] = [["id": "1"]] }
                == "cannot decode Cart at items[0].id: expected an integer, found a string (\"1\")")
        #expect(
            failure { $0["items"] = [["id": 1.5, "price": 1, "tags": [], "kind": "fruit"]] }
                == "cannot decode Cart at items[0].id: expected an integer (Int), found 1.5")
        #expect(failure { $0["coupon"] = 300 } == "cannot decode Cart at coupon: 300 does not fit in UInt8")
        #expect(
            failure { $0["items"] = [["id": 1, "price": 1, "tags": [], "kind": "car"]] }.hasPrefix(
                "cannot decode Cart at items[0].kind: "))
        #expect(
            failure { $0["paid"] = .null } == "cannot decode Cart at paid: expected a boolean, found null")
        value = .array([])
        #expect(
            throws: PayloadDecodingError(
                type: "Cart", path: "", reason: "expected an object, found an array of 0")
        ) {
            try JSONValueDecoder.decode(Cart.self, from: value)
        }
        #expect(throws: PayloadDecodingError.self) {
            try JSONValueDecoder.decode(Cart.self, from: Array("{".utf8))
        }
    }

    @Test("numbers JSON cannot hold are refused when encoding")
    func unencodable() {
        struct Reading: Encodable { let value: Double }
        #expect(throws: EncodingError.self) { try JSONValueEncoder.encode(Reading(value: .nan)) }
        #expect(throws: EncodingError.self) { try JSONValueEncoder.encode([UInt64.max]) }
        struct Order: Encodable {
            struct Line: Encodable { let count: UInt64 }
            let lines: [Line]
        }
        do {
            _ = try JSONValueEncoder.encode(Order(lines: [Order.Line(count: 1), Order.Line(count: .max)]))
            Issue.record("a UInt64 above Int64.max was encoded")
        } catch let EncodingError.invalidValue(_, context) {
            #expect(
                context.debugDescription.hasPrefix("field 'lines[1].count' is 18446744073709551615, beyond"),
                "\(context.debugDescription)")
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test(
        "the outline of a type: members in order, optionals marked, integers apart from numbers, arrays, any, enums"
    )
    func shape() {
        #expect(
            TypeShape.of(Cart.self).text
                == #"{"owner": string, "items": [{"id": integer, "price": number, "tags": [string], "note"?: string, "kind": string}], "paid": boolean, "extra": any, "coupon"?: integer, "big": integer}"#
        )
        #expect(TypeShape.of(Item.self).fields["note"] == "string?")
        struct Ranked: Decodable { let name: String; let tier: Tier; let score: Int }
        #expect(TypeShape.of(Ranked.self).text == #"{"name": string, "tier": string, …}"#)
        struct Node: Decodable { let name: String; let children: [Node] }
        #expect(TypeShape.of(Node.self).text.hasPrefix(#"{"name": string, "children": [{"name": string"#))
        #expect(TypeShape.of(String.self) == .string)
        #expect(TypeShape.of([Int].self) == .array(.integer))
        #expect(TypeShape.of([Float].self) == .array(.number))
    }
}

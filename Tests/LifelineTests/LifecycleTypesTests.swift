import Lifeline
import Testing

@testable import LifelineProtocol

@Suite("The built-in events as types match the catalogue")
struct LifecycleTypesTests {
    @Test("every catalogued event has its type, with the catalogue's field names, optionality and kinds")
    func typesMatchCatalog() {
        #expect(Lifecycle.all.map { $0.name } == EventCatalog.names)
        for type in Lifecycle.all {
            guard let descriptor = EventCatalog.descriptor(for: type.name) else {
                Issue.record("\(type) names no catalogued event")
                continue
            }
            let shape = shapeOf(type)
            // A type without members never asks for its object: nothing to see.
            if descriptor.fields.isEmpty && shape == .unknown { continue }
            guard case .object(let members, let complete) = shape else {
                Issue.record("\(type): \(shape.text)")
                continue
            }
            #expect(complete)
            #expect(members.map(\.name) == descriptor.fields.map(\.name), "\(type)")
            for (member, field) in zip(members, descriptor.fields) {
                #expect(member.optional == !field.isRequired, "\(type).\(member.name)")
                let expected: [TypeShape] =
                    switch field.kind {
                    case .string: [.string]
                    case .bool: [.bool]
                    case .number: [.number, .integer]
                    case .object, .any: [.any]
                    }
                #expect(expected.contains(member.shape), "\(type).\(member.name)")
            }
        }
    }

    private func shapeOf<E: LifelineEvent>(_ type: E.Type) -> TypeShape { TypeShape.of(type) }
}

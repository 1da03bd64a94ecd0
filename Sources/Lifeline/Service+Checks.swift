import LifelineProtocol

/// What a service refuses before it connects: the mistakes in how it was put together, noted as
/// they are made (a method or handler declared twice, a handler of a built-in event that can never
/// decode) and thrown together when it runs, as a broker would refuse them for good.
extension Service {
    /// Throws the mistakes in how this service was put together, all named in one sentence.
    /// - Throws: ``LifelineError`` (`.invalid`) when there are any.
    func checkConfiguration() throws(LifelineError) {
        var problems = configurationProblems
        let unknown = idempotentMethods.subtracting(methodHandlers.keys).sorted()
        if !unknown.isEmpty {
            problems.append(
                "idempotent(\(unknown.map { "\"\($0)\"" }.joined(separator: ", "))) names no method or actor func of '\(name)'"
            )
        }
        for event in eventHandlers.keys.map(\.rawValue).sorted() {
            do { _ = try EventCatalog.validateName(event) } catch {
                problems.append("'\(name)' handles \(error.message)")
            }
        }
        let unhandled = sharedEvents.subtracting(eventHandlers.keys).map(\.rawValue).sorted()
        if !unhandled.isEmpty {
            problems.append(
                "shared(\(unhandled.joined(separator: ", "))) names no event '\(name)' handles")
        }
        guard problems.isEmpty else {
            throw LifelineError(.badRequest, problems.joined(separator: "; "))
        }
    }

    /// This service, noting a second handler of `event` (it would replace the first).
    func checkingHandler(_ event: EventName) -> Service {
        guard eventHandlers[event] != nil else { return self }
        var copy = self
        copy.configurationProblems.append(
            "the event \(event) is handled twice; the second handler would replace the first")
        return copy
    }

    /// This service, noting a method named like one of its actor's funcs or like a method it has
    /// already (either would be replaced).
    func checkingName(_ method: String) -> Service {
        var copy = self
        if let function = actorMethods[method] {
            copy.configurationProblems.append(
                "\(function) and the service's method '\(method)' share a name; rename one")
        } else if methodHandlers[method] != nil {
            copy.configurationProblems.append(
                "the method '\(method)' is declared twice; the second would replace the first")
        }
        return copy
    }

    /// This service, noting a typed handler of a built-in event whose type needs a field the event
    /// never carries (it would never decode: a custom event given a built-in name, say).
    func checkingBuiltIn<E: LifelineEvent>(_ type: E.Type) -> Service {
        guard let descriptor = EventCatalog.descriptor(for: E.name), !descriptor.fields.isEmpty,
            case .object(let members, _) = TypeShape.of(E.self)
        else { return self }
        let known = descriptor.fields.map(\.name)
        let foreign = members.filter { !$0.optional && !known.contains($0.name) }.map { "'\($0.name)'" }
        guard !foreign.isEmpty else { return self }
        var copy = self
        copy.configurationProblems.append(
            "\(E.self) handles the built-in event \(E.name), whose fields are \(known.map { "'\($0)'" }.joined(separator: ", ")): it needs \(foreign.joined(separator: ", ")), which that event never carries (a custom event needs a namespace: 'com.example.\(E.name)')"
        )
        return copy
    }
}

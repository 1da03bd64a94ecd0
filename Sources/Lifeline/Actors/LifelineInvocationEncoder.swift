import Distributed
import LifelineProtocol

/// Records a remote call's arguments as JSON, for the body of its CALL (``LifelineActorSystem``).
public struct LifelineInvocationEncoder: DistributedTargetInvocationEncoder {
    public typealias SerializationRequirement = any Codable

    /// Each argument's JSON form, in order.
    private(set) var arguments: [JSONValue] = []
    /// The generic substitutions the call recorded: the actor's own type for a `@Resolvable`
    /// protocol's stub, anything more for a generic func.
    private(set) var substitutions: [ObjectIdentifier] = []

    init() {}

    public mutating func recordGenericSubstitution<T>(_ type: T.Type) throws {
        substitutions.append(ObjectIdentifier(type))
    }

    /// - Throws: `EncodingError` for a value JSON cannot hold (a non-finite number).
    public mutating func recordArgument<Value: Codable>(_ argument: RemoteCallArgument<Value>) throws {
        arguments.append(try JSONValueEncoder.encode(argument.value))
    }

    public mutating func recordErrorType<E: Error>(_ type: E.Type) throws {}

    public mutating func recordReturnType<R: Codable>(_ type: R.Type) throws {}

    public mutating func doneRecording() throws {}

    /// The CALL's body: an object of the arguments under `keys` (their labels, or positions); a nil
    /// optional is left out, as in any typed body.
    func body(keys: [String]) -> JSONValue {
        var members: [String: JSONValue] = [:]
        for (index, value) in arguments.enumerated() where value != .null {
            members[index < keys.count ? keys[index] : String(index)] = value
        }
        return .object(members)
    }
}

import Distributed
import LifelineProtocol

extension LifelineActorSystem {
    /// Records a remote call's arguments as JSON, for the body of its CALL (``LifelineActorSystem``).
    public struct InvocationEncoder: DistributedTargetInvocationEncoder {
        public typealias SerializationRequirement = any Codable

        /// Each argument's JSON text, in order.
        private(set) var arguments: [[UInt8]] = []
        /// The generic substitutions the call recorded: the actor's own type for a `@Resolvable`
        /// protocol's stub, anything more for a generic func.
        private(set) var substitutions: [ObjectIdentifier] = []

        init() {}

        /// Notes a generic substitution (a call naming more than its actor's own type is refused).
        /// - Throws: never.
        public mutating func recordGenericSubstitution<T>(_ type: T.Type) throws {
            substitutions.append(ObjectIdentifier(type))
        }

        /// Adds the next argument's JSON text, written straight from the value.
        /// - Throws: `EncodingError` for a value JSON cannot hold (a non-finite number).
        public mutating func recordArgument<Value: Codable>(_ argument: RemoteCallArgument<Value>) throws {
            arguments.append(try JSONBytesEncoder.encode(argument.value))
        }

        /// Not sent: the reply says what was thrown.
        /// - Throws: never.
        public mutating func recordErrorType<E: Error>(_ type: E.Type) throws {}

        /// Not sent: the reply is the value's JSON form.
        /// - Throws: never.
        public mutating func recordReturnType<R: Codable>(_ type: R.Type) throws {}

        /// Ends the recording.
        /// - Throws: never.
        public mutating func doneRecording() throws {}

        /// The CALL's body: an object of the arguments under `keys` (their labels, or positions); a nil
        /// optional is left out, as in any typed body.
        func body(keys: [String]) -> [UInt8] {
            var text: [UInt8] = [UInt8(ascii: "{")]
            var first = true
            for (index, value) in arguments.enumerated() where value != Self.null {
                if !first { text.append(UInt8(ascii: ",")) }
                first = false
                JSONWriter.writeString(index < keys.count ? keys[index] : String(index), into: &text)
                text.append(UInt8(ascii: ":"))
                text += value
            }
            text.append(UInt8(ascii: "}"))
            return text
        }

        private static let null = Array("null".utf8)
    }
}

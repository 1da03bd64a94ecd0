import Distributed
import LifelineProtocol

extension LifelineActorSystem {
    /// Reads a CALL's body as the arguments of a hosted actor's distributed func: an object keyed by
    /// the argument labels (an unlabeled one by its position, `"0"`), or an array of them in order;
    /// `null` or nothing for a func without arguments.
    public struct InvocationDecoder: DistributedTargetInvocationDecoder {
        public typealias SerializationRequirement = any Codable

        private let function: DistributedFunction
        /// The body, read once.
        private let document: JSONDocument?
        /// Each argument's value in ``document``, by position; nil when the body left it out.
        private let arguments: [Int?]
        private var next = 0
        /// The argument that did not decode: the call is answered 400 with it.
        private(set) var failure: PayloadDecodingError?
        /// Set for a decoder that only records the arguments' shapes (``init(recording:)``).
        private let isRecording: Bool
        private var recorded: [TypeShape.Member] = []

        /// The arguments' shapes as `lifeline describe` shows them: `{"user": string, "password": string}`.
        var recordedShape: TypeShape {
            .object(recorded, complete: recorded.count == function.argumentKeys.count)
        }

        /// A decoder that hands each argument a placeholder and records its type's shape, then stops the
        /// call before it runs.
        init(recording function: DistributedFunction) {
            self.function = function
            self.document = nil
            self.arguments = []
            self.isRecording = true
        }

        /// Thrown after the last argument is recorded, so the func never runs.
        private struct Recorded: Error {}

        /// - Throws: ``ServiceError`` (400) for a body that is not an object or array of the func's
        ///   arguments, naming what is wrong.
        init(function: DistributedFunction, body: JSONValue) throws(ServiceError) {
            try self.init(function: function, text: JSONWriter.encode(body))
        }

        /// Reads the arguments straight from the body's text.
        /// - Throws: ``ServiceError`` (400) for a body that is not an object or array of the func's
        ///   arguments, naming what is wrong.
        init(function: DistributedFunction, text: [UInt8]) throws(ServiceError) {
            self.function = function
            self.isRecording = false
            let keys = function.argumentKeys
            let document: JSONDocument
            do { document = try JSONDocument(text: text) } catch {
                throw ServiceError(.badRequest, "\(function.signature): the body is not JSON: \(error)")
            }
            self.document = document
            switch document.root {
            case .null:
                arguments = Array(repeating: nil, count: keys.count)
            case .object(let members):
                if !members.allNamed(in: keys),
                    let unknown = members.names.sorted().first(where: { !keys.contains($0) })
                {
                    let takes = keys.isEmpty ? "takes no arguments" : "takes \(keys.joined(separator: ", "))"
                    throw ServiceError(
                        .badRequest,
                        "\(function.signature) \(takes); there is no argument '\(unknown)'"
                            + Suggestion.phrase(for: unknown, in: keys))
                }
                arguments = keys.map { members[$0] }
            case .array(let values):
                guard values.count == keys.count else {
                    throw ServiceError(
                        .badRequest,
                        "\(function.signature) takes \(keys.count) arguments, not \(values.count)")
                }
                arguments = values
            default:
                throw ServiceError(
                    .badRequest,
                    "\(function.signature): the body must be an object of its arguments (\(keys.joined(separator: ", "))) or an array of them"
                )
            }
        }

        /// None: generic funcs are not served.
        /// - Throws: never.
        public mutating func decodeGenericSubstitutions() throws -> [Any.Type] { [] }

        /// The next argument, decoded from its member of the body.
        /// - Throws: ``PayloadDecodingError`` naming the argument (and the path inside it).
        public mutating func decodeNextArgument<Argument: Codable>() throws -> Argument {
            defer { next += 1 }
            let key = next < function.argumentKeys.count ? function.argumentKeys[next] : String(next)
            if isRecording { return try record(Argument.self, as: key) }
            let value = next < arguments.count ? arguments[next] : nil
            do {
                guard let value, let document else {
                    return try JSONValueDecoder.decode(Argument.self, from: .null)
                }
                return try document.decode(Argument.self, at: value)
            } catch {
                let reason = value == nil ? "missing" : error.reason
                let path = value == nil ? "" : error.path
                let failure = PayloadDecodingError(
                    type: error.type,
                    path: path.isEmpty ? key : key + (path.hasPrefix("[") ? "" : ".") + path,
                    reason: reason)
                self.failure = failure
                throw failure
            }
        }

        private mutating func record<Argument: Decodable>(_ type: Argument.Type, as key: String) throws
            -> Argument
        {
            let (shape, placeholder) = TypeShape.sample(type)
            let optional = (try? JSONValueDecoder.decode(type, from: .null)) != nil
            recorded.append(TypeShape.Member(name: key, shape: shape, optional: optional))
            guard next + 1 < function.argumentKeys.count, let placeholder else { throw Recorded() }
            return placeholder
        }

        /// None: the func's own declaration says.
        /// - Throws: never.
        public mutating func decodeErrorType() throws -> Any.Type? { nil }

        /// None: the func's own declaration says.
        /// - Throws: never.
        public mutating func decodeReturnType() throws -> Any.Type? { nil }
    }
}

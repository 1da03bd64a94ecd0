import Distributed

/// A hosted actor's distributed func, run the way `executeDistributedTarget` runs it but with its
/// signature read once. The Distributed library's `executeDistributedTarget` demangles the func's
/// name on every call to learn its parameter count, parameter types and return type (a profile put
/// that at about half of what an actor call costs its host beyond a typed method); here they are
/// read when the func is first called and kept, and the call goes to the runtime entry point that
/// `executeDistributedTarget` itself ends in.
///
/// Only funcs that are not generic come here (generic ones are not served). When the runtime cannot
/// give the signature, ``signature(of:)`` is nil and the call goes through
/// `executeDistributedTarget` as before.
final class DistributedTarget: @unchecked Sendable {
    /// The mangled name of the func's distributed thunk, as UTF-8 (kept for the process's life, as
    /// the types are).
    private let name: UnsafeMutableBufferPointer<UInt8>
    /// The parameter types, in a buffer the runtime reads (never written after init, never freed:
    /// one per func a process serves).
    private let argumentTypes: UnsafeMutableBufferPointer<Any.Type>
    /// What the func returns (`Void` for nothing).
    private let returnType: Any.Type

    /// The signature of the func `identifier` names, read from the runtime once; nil when it cannot
    /// be read (then the caller uses `executeDistributedTarget`).
    static func signature(of identifier: String) -> DistributedTarget? {
        let name = Array(identifier.utf8)
        return name.withUnsafeBufferPointer { utf8 -> DistributedTarget? in
            guard let start = utf8.baseAddress else { return nil }
            let length = UInt(utf8.count)
            guard _getGenericEnvironmentOfDistributedTarget(start, length) == nil else { return nil }
            let count = Int(__getParameterCount(start, length))
            guard count >= 0 else { return nil }
            let types = UnsafeMutableBufferPointer<Any.Type>.allocate(capacity: max(1, count))
            let written = Int(
                runtimeParameterTypes(
                    start, length, nil, nil, UnsafeMutableRawPointer(types.baseAddress!), count))
            guard written == count, let returnType = __getReturnTypeInfo(start, length, nil, nil) else {
                types.deallocate()
                return nil
            }
            let kept = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: utf8.count)
            _ = kept.initialize(from: utf8)
            return DistributedTarget(name: kept, argumentTypes: types, returnType: returnType)
        }
    }

    private init(
        name: UnsafeMutableBufferPointer<UInt8>, argumentTypes: UnsafeMutableBufferPointer<Any.Type>,
        returnType: Any.Type
    ) {
        self.name = name
        self.argumentTypes = argumentTypes
        self.returnType = returnType
    }

    /// Runs the func on `actor` with the arguments `decoder` gives, and hands what it returned or
    /// threw to `handler`, as `executeDistributedTarget` would.
    /// - Throws: what `handler` throws (ours never does).
    func execute(
        on actor: some DistributedActor, decoder: inout LifelineActorSystem.InvocationDecoder,
        handler: LifelineActorSystem.ResultHandler
    ) async throws {
        let result = Self.allocate(returnType)
        defer { result.deallocate() }
        do {
            try await runtimeExecuteDistributedTarget(
                on: actor, UnsafePointer(name.baseAddress!), UInt(name.count), argumentDecoder: &decoder,
                argumentTypes: UnsafeRawPointer(argumentTypes.baseAddress!), resultBuffer: result,
                substitutions: nil, witnessTables: nil, numWitnessTables: 0)
        } catch {
            try await handler.onThrow(error: error)
            return
        }
        if returnType == Void.self {
            try await handler.onReturnVoid()
        } else if let codable = returnType as? any Codable.Type {
            try await Self.hand(result, as: codable, to: handler)
        } else {
            // A distributed func's result is Codable (the system's requirement); anything else is
            // not ours to read, and is left where it is.
            try await handler.onThrow(
                error: LifelineError(
                    .internalError, "\(returnType) is not Codable: its value cannot be answered"))
        }
    }

    /// A buffer for one value of `type`.
    private static func allocate(_ type: Any.Type) -> UnsafeMutableRawPointer {
        func buffer<T>(_: T.Type) -> UnsafeMutableRawPointer {
            UnsafeMutableRawPointer(UnsafeMutablePointer<T>.allocate(capacity: 1))
        }
        return _openExistential(type, do: buffer)
    }

    /// Moves the value the func returned out of `result` and hands it to `handler`.
    private static func hand<T: Codable>(
        _ result: UnsafeMutableRawPointer, as type: T.Type, to handler: LifelineActorSystem.ResultHandler
    ) async throws {
        let value = result.assumingMemoryBound(to: T.self).move()
        try await handler.onReturn(value: value)
    }
}

/// The runtime entry point `executeDistributedTarget` ends in, declared as the Distributed library
/// declares it: it finds the func's accessor by name, which decodes each argument with
/// `argumentDecoder` and runs the func on the actor, leaving its value in `resultBuffer`.
@_silgen_name("swift_distributed_execute_target")
private func runtimeExecuteDistributedTarget<D: DistributedTargetInvocationDecoder>(
    on actor: AnyObject, _ targetName: UnsafePointer<UInt8>, _ targetNameLength: UInt,
    argumentDecoder: inout D, argumentTypes: UnsafeRawPointer, resultBuffer: UnsafeMutableRawPointer,
    substitutions: UnsafeRawPointer?, witnessTables: UnsafeRawPointer?, numWitnessTables: UInt
) async throws

/// The runtime's reader of a func's parameter types (as the Distributed library declares it, with a
/// raw pointer for the buffer it fills).
@_silgen_name("swift_func_getParameterTypeInfo")
private func runtimeParameterTypes(
    _ typeNameStart: UnsafePointer<UInt8>, _ typeNameLength: UInt, _ genericEnvironment: UnsafeRawPointer?,
    _ genericArguments: UnsafeRawPointer?, _ types: UnsafeMutableRawPointer, _ typesLength: Int
) -> Int32

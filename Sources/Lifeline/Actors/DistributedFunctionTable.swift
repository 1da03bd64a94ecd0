import Distributed

/// The distributed funcs a hosted actor type answers, found in the program's own metadata: every
/// distributed func leaves an "accessible function" record (its mangled name) that the runtime's
/// `executeDistributedTarget` looks up by name. Listing those records is how a service knows, before
/// any call, which methods to register and what `lifeline describe` shows, with no hand-written table
/// to drift from the code.
///
/// The records are read through `swift_enumerateAllMetadataSections`, the runtime's own walk over
/// every loaded image's metadata sections on Linux (the one swift-testing uses to find tests). Its
/// layout is versioned, and this reader knows exactly one version: when any loaded image has another
/// (older or newer), nothing is read and ``unreadable`` says so in one sentence, which
/// ``Service/actor(_:)`` turns into a refusal at service start instead of a guess.
enum DistributedFunctionTable {
    /// One distributed func of an actor type.
    struct Entry: Sendable {
        let function: DistributedFunction
        /// The mangled name of its distributed thunk: the target `executeDistributedTarget` runs.
        let identifier: String
        /// Its signature, read once, to run it without demangling its name on every call (nil when
        /// the runtime cannot give it: `executeDistributedTarget` runs it then).
        let target: DistributedTarget?

        init(function: DistributedFunction, identifier: String) {
            self.init(
                function: function, identifier: identifier,
                target: DistributedTarget.signature(of: identifier))
        }

        /// An entry run by `target`, or by `executeDistributedTarget` when it is nil.
        init(function: DistributedFunction, identifier: String, target: DistributedTarget?) {
            self.function = function
            self.identifier = identifier
            self.target = target
        }
    }

    /// What the table found for one actor type.
    struct Listing: Sendable {
        var entries: [Entry] = []
        /// Funcs it cannot serve, and why (generic ones).
        var skipped: [String] = []
    }

    /// Why the runtime's records could not be read, or nil when they could.
    static var unreadable: String? { records.problem }

    /// The metadata layout versions of the loaded images.
    static var versionsSeen: Set<UInt> { records.versions }

    /// The distributed funcs declared on `type` itself (in its body or an extension in its module),
    /// found by the mangled name of their thunks, which starts with the type's. A type whose records
    /// cannot be named that way — a `private` or `fileprivate` type (its mangled name is unique to
    /// its file), a generic one — has none: ``Service/actor(_:)`` says so.
    static func listing(of type: Any.Type) -> Listing {
        var listing = Listing()
        guard let mangled = _mangledTypeName(type) else { return listing }
        let prefix = "$s" + mangled
        let owner = String(describing: type)
        for record in records.all where record.name.hasPrefix(prefix) && record.isDistributed {
            guard let function = DistributedFunction(demangled: record.demangled) else {
                listing.skipped.append(
                    "\(record.demangled) (its name is not a method name: ASCII letters, digits, _)")
                continue
            }
            // A member of a type nested in this one, whose mangled name starts the same.
            guard function.owner == owner else { continue }
            if record.isGeneric {
                listing.skipped.append("\(function.signature) (generic distributed funcs are not supported)")
                continue
            }
            listing.entries.append(Entry(function: function, identifier: record.name))
        }
        listing.entries.sort { $0.function.signature < $1.function.signature }
        return listing
    }

    private struct Record: Sendable {
        let name: String
        let demangled: String
        let isGeneric: Bool
        /// The record's flags mark it a distributed func's accessor.
        let isDistributed: Bool
    }

    private static let records: (all: [Record], problem: String?, versions: Set<UInt>) = readRecords()

    /// The metadata layout version this reader knows: its ranges start after four words, and the
    /// accessible functions are the thirteenth range (after protocols, conformances, type metadata,
    /// typeref, reflstr, fieldmd, assocty, replace, replac2, builtin, capture, mpenum).
    static let knownVersion: UInt = 5
    private static let accessibleFunctionsRange = 12
    /// An accessible function record: name, generic environment, function type, function (each a
    /// 32-bit offset from its own address) and 32-bit flags.
    private static let recordSize = 20
    /// The flag of a record that is a distributed func's accessor.
    private static let distributedFlag: UInt32 = 1

    private final class Collected {
        var records: [Record] = []
        /// The layout version of every image seen.
        var versions: Set<UInt> = []
    }

    private static func readRecords() -> (all: [Record], problem: String?, versions: Set<UInt>) {
        let collected = Collected()
        let context = Unmanaged.passRetained(collected)
        enumerateAllMetadataSections(collect, context.toOpaque())
        context.release()
        let unknown = collected.versions.subtracting([knownVersion])
        guard let version = unknown.max() else { return (collected.records, nil, collected.versions) }
        return (
            [],
            "the Swift runtime's metadata sections are version \(version), and Lifeline reads only version \(knownVersion) (the layout of the Swift 6.3 runtime it is tested with); build with such a toolchain, or with a Lifeline that knows version \(version)",
            collected.versions
        )
    }

    /// Reads one image's accessible function records into the ``Collected`` that `context` is.
    private static let collect: @convention(c) (UnsafeRawPointer, UnsafeMutableRawPointer?) -> Bool = {
        sections, context in
        guard let context else { return false }
        let collected = Unmanaged<Collected>.fromOpaque(context).takeUnretainedValue()
        let words = sections.assumingMemoryBound(to: UInt.self)
        // The version is each image's own (set when it was linked); any but the known one makes the
        // whole table unreadable (``readRecords``), so its ranges are not read.
        collected.versions.insert(words[0])
        guard words[0] == knownVersion else { return true }
        let start = words[4 + 2 * accessibleFunctionsRange]
        let length = Int(words[5 + 2 * accessibleFunctionsRange])
        guard length > 0, let base = UnsafeRawPointer(bitPattern: start) else { return true }
        var offset = 0
        while offset + recordSize <= length {
            let record = base + offset
            offset += recordSize
            guard let name = target(of: record) else { continue }
            let mangled = String(cString: name.assumingMemoryBound(to: CChar.self))
            collected.records.append(
                Record(
                    name: mangled, demangled: RemoteCallTarget(mangled).description,
                    isGeneric: target(of: record + 4) != nil,
                    isDistributed: record.load(fromByteOffset: 16, as: UInt32.self) & distributedFlag != 0))
        }
        return true
    }

    /// What a relative pointer (a 32-bit offset from its own address) points at; nil when 0.
    private static func target(of pointer: UnsafeRawPointer) -> UnsafeRawPointer? {
        let offset = pointer.loadUnaligned(as: Int32.self)
        return offset == 0 ? nil : pointer + Int(offset)
    }
}

/// The runtime's walk over the metadata sections of every loaded image; the body returns false to stop.
@_silgen_name("swift_enumerateAllMetadataSections")
private func enumerateAllMetadataSections(
    _ body: @convention(c) (UnsafeRawPointer, UnsafeMutableRawPointer?) -> Bool,
    _ context: UnsafeMutableRawPointer?)

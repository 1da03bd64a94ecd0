/// A distributed func as the wire names it: the CALL's method is its base name (`resolve` for
/// `resolve(url:)`) and its arguments travel as one JSON object keyed by their labels (an unlabeled
/// argument by its position, `"0"`).
struct DistributedFunction: Sendable, Hashable {
    /// The base name and labels, `add(_:to:)`.
    let signature: String
    /// The base name, `add`: the method a CALL names.
    let method: String
    /// The key of each argument in the call's body, in order: `["0", "to"]` for `add(_:to:)`; an
    /// unlabeled argument's key is its position among all the arguments.
    let argumentKeys: [String]
    /// The name of the type it belongs to as the target names it (`Type`), if it names one.
    let owner: String?

    /// The function a demangled target names — `Module.Type.resolve(url:)`, `resolve(url:)`; a
    /// `distributed var` reads as a func without arguments, `Module.Type.total()` — or nil when its
    /// base name is not a method name the broker takes (ASCII letters, digits and `_`, at most 100).
    init?(demangled text: String) {
        guard text.hasSuffix(")"), let open = text.lastIndex(of: "(") else { return nil }
        let components = text[..<open].split(separator: ".", omittingEmptySubsequences: false)
        let base = components.last.map(String.init) ?? ""
        guard !base.isEmpty, base.utf8.count <= 100,
            base.unicodeScalars.allSatisfy({
                $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_")
            })
        else { return nil }
        owner = components.count > 1 ? String(components[components.count - 2]) : nil
        let labels = text[text.index(after: open)..<text.index(before: text.endIndex)]
            .split(separator: ":", omittingEmptySubsequences: true)
        method = base
        argumentKeys = labels.enumerated().map { index, label in label == "_" ? String(index) : String(label)
        }
        signature = base + "(" + labels.map { $0 + ":" }.joined() + ")"
    }
}

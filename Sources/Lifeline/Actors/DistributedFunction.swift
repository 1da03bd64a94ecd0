/// A distributed func as the wire names it: the CALL's method is its base name (`resolve` for
/// `resolve(url:)`) and its arguments travel as one JSON object keyed by their labels (an unlabeled
/// argument by its position, `"0"`).
struct DistributedFunction: Sendable, Hashable {
    /// The base name and labels, `add(_:to:)`.
    let signature: String
    /// The base name, `add`: the method a CALL names.
    let method: String
    /// The key of each argument in the call's body, in order: `["0", "to"]` for `add(_:to:)`.
    let argumentKeys: [String]

    /// The function a demangled target names — `Module.Type.resolve(url:)`, `resolve(url:)` — or
    /// nil for one that is not a plain func (a `distributed var`'s accessor).
    init?(demangled text: String) {
        guard text.hasSuffix(")"), let open = text.lastIndex(of: "(") else { return nil }
        let head = text[..<open]
        let base = head.split(separator: ".", omittingEmptySubsequences: false).last.map(String.init) ?? ""
        guard !base.isEmpty, base.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else { return nil }
        let labels = text[text.index(after: open)..<text.index(before: text.endIndex)]
            .split(separator: ":", omittingEmptySubsequences: true)
        method = base
        argumentKeys = labels.enumerated().map { index, label in label == "_" ? String(index) : String(label)
        }
        signature = base + "(" + labels.map { $0 + ":" }.joined() + ")"
    }
}

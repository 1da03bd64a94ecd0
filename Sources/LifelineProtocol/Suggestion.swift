/// "Did you mean …?": the candidate closest to a mistyped name, when it is close enough (an edit
/// distance of at most a third of the name's length, and at most 3).
package enum Suggestion {
    /// The closest of `candidates` to `text`, or nil when none is close.
    public static func closest(to text: String, in candidates: some Sequence<String>) -> String? {
        let limit = min(3, max(1, text.count / 3))
        var best: (String, Int)?
        for candidate in candidates where candidate != text {
            let distance = editDistance(text.lowercased(), candidate.lowercased())
            if distance <= limit, distance < (best?.1 ?? .max) { best = (candidate, distance) }
        }
        return best?.0
    }

    /// `; did you mean 'X'?` for the closest candidate, or "".
    public static func phrase(for text: String, in candidates: some Sequence<String>) -> String {
        closest(to: text, in: candidates).map { "; did you mean '\($0)'?" } ?? ""
    }

    /// Levenshtein distance (insertions, deletions, substitutions).
    static func editDistance(_ left: String, _ right: String) -> Int {
        let a = Array(left.utf8)
        let b = Array(right.utf8)
        if a.isEmpty { return b.count }
        var previous = Array(0...b.count)
        var current = previous
        for i in 1...a.count {
            current[0] = i
            for j in stride(from: 1, through: b.count, by: 1) {
                current[j] = min(
                    previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}

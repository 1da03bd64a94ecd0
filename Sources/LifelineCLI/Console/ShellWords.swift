/// Splits a command line into words the way a POSIX shell does for plain words and quotes:
/// blanks separate words; `'…'` is literal; in `"…"` a backslash escapes `"` and `\`; elsewhere a
/// backslash escapes the next character. Nothing is expanded.
enum ShellWords {
    /// The words of `line`.
    /// - Throws: ``ShellWords/Unterminated`` when a quote is not closed.
    static func split(_ line: String) throws(Unterminated) -> [String] {
        var words: [String] = []
        var word = ""
        var inWord = false
        var quote: Character?
        var escaped = false
        for character in line {
            if escaped {
                if quote == "\"" && character != "\"" && character != "\\" { word.append("\\") }
                word.append(character)
                escaped = false
                continue
            }
            switch (quote, character) {
            case ("'", "'"), ("\"", "\""): quote = nil
            case ("'", _): word.append(character)
            case ("\"", "\\"), (nil, "\\"):
                escaped = true
                inWord = true
            case ("\"", _): word.append(character)
            case (nil, "'"), (nil, "\""):
                quote = character
                inWord = true
            case (nil, " "), (nil, "\t"), (nil, "\n"):
                if inWord { words.append(word) }
                word = ""
                inWord = false
            default:
                word.append(character)
                inWord = true
            }
        }
        if let quote { throw Unterminated(quote: quote) }
        if escaped { word.append("\\") }
        if inWord { words.append(word) }
        return words
    }

    /// A quote that is opened and never closed.
    struct Unterminated: Error, Equatable {
        var quote: Character
        var message: String { "the \(quote == "'" ? "single" : "double") quote is not closed" }
    }
}

/// One option of a command line, declared once: ``CommandLineArguments`` reads it by this
/// declaration and `--help` prints it from the same one, so the parsing and the help cannot drift
/// apart (the reader refuses to read an option its command did not declare).
package struct CommandLineOption: Sendable {
    /// Its spellings, the main one first (`--help`, `-h`).
    package let names: [String]
    /// What its value is called in the help (`FILE`, `MS`); nil for a flag, which takes none.
    package let placeholder: String?
    /// One sentence or two, without a line break: the help wraps it.
    package let help: String

    /// A flag: present or not, no value.
    package static func flag(_ names: String..., help: String) -> CommandLineOption {
        CommandLineOption(names: names, placeholder: nil, help: help)
    }

    /// An option with a value: `--name VALUE` or `--name=VALUE`.
    package static func value(_ name: String, _ placeholder: String, help: String) -> CommandLineOption {
        CommandLineOption(names: [name], placeholder: placeholder, help: help)
    }

    /// `-h, --help`, which every command accepts.
    package static let helpFlag = flag("-h", "--help", help: "show this help")

    /// The main spelling.
    package var name: String { names.last(where: { $0.hasPrefix("--") }) ?? names[0] }

    package var isFlag: Bool { placeholder == nil }

    /// The same option with another help text, for a command where it means something more precise.
    package func helping(_ text: String) -> CommandLineOption {
        CommandLineOption(names: names, placeholder: placeholder, help: text)
    }

    /// Whether `other` is this option (whatever help text either carries).
    package func isSame(as other: CommandLineOption) -> Bool { names == other.names }

    /// How it is written in the help's left column: `-h, --help`, `--timeout T`.
    var label: String {
        names.joined(separator: ", ") + (placeholder.map { " " + $0 } ?? "")
    }

    /// The help lines of `options`: labels in a column, help texts beside them wrapped at `width`
    /// columns; a label too long for the column gets its help on the next line.
    package static func helpText(_ options: [CommandLineOption], width: Int = 100) -> String {
        let column = min(options.map { $0.label.count }.max() ?? 0, 26) + 4
        var lines: [String] = []
        for option in options {
            let label = "  " + option.label
            let words = wrap(option.help, width: width - column)
            if label.count + 2 > column {
                lines.append(label)
                lines += words.map { String(repeating: " ", count: column) + $0 }
            } else {
                let padded = label + String(repeating: " ", count: column - label.count)
                lines.append(padded + (words.first ?? ""))
                lines += words.dropFirst().map { String(repeating: " ", count: column) + $0 }
            }
        }
        return lines.joined(separator: "\n")
    }

    /// `text` broken into lines of at most `width` characters, at spaces (a longer word stands alone).
    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if line.isEmpty {
                line = String(word)
            } else if line.count + 1 + word.count <= width {
                line += " " + word
            } else {
                lines.append(line)
                line = String(word)
            }
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }
}

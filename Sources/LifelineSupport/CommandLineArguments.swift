import LifelineProtocol

/// A command line that was used wrongly: exit status 2 and one sentence.
public struct UsageError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// A reader of `--option value`, `--option=value`, flags and positional arguments, shared by the
/// CLI and service executables, that reads only the options its command declared
/// (``CommandLineOption``: the same declarations make the command's help). Every token is taken by
/// its position: an option's value is the token right after it (whatever its text), options may
/// appear anywhere before `--`, everything after `--` is positional, an option may be given more
/// than once (``options(_:)``), and ``finish()`` names what nobody asked for.
package struct CommandLineArguments: Sendable {
    private struct Token: Sendable {
        let text: String
        /// After `--`: positional whatever it looks like.
        let isPositionalOnly: Bool
        var taken = false

        var looksLikeOption: Bool {
            !isPositionalOnly && text.hasPrefix("-") && text.count > 1 && Double(text) == nil
        }

        /// The option's name as written: `--name` of `--name=value`.
        var optionName: String {
            text.split(separator: "=", maxSplits: 1).first.map(String.init) ?? text
        }
    }

    private var tokens: [Token] = []
    /// The options the command accepts (always with `-h, --help`).
    package let declared: [CommandLineOption]

    /// The arguments of this process, without the executable, for a command accepting `declared`.
    package static func process(declaring declared: [CommandLineOption]) -> CommandLineArguments {
        CommandLineArguments(Array(CommandLine.arguments.dropFirst()), declaring: declared)
    }

    package init(_ arguments: [String], declaring declared: [CommandLineOption]) {
        self.declared = [CommandLineOption.helpFlag] + declared.filter { !$0.isSame(as: .helpFlag) }
        var afterTerminator = false
        for argument in arguments {
            if argument == "--" && !afterTerminator {
                afterTerminator = true
                continue
            }
            tokens.append(Token(text: argument, isPositionalOnly: afterTerminator))
        }
    }

    /// Reading an option the command did not declare is the command's bug: its help would not list it.
    private func checkDeclared(_ option: CommandLineOption) {
        assert(
            declared.contains { $0.isSame(as: option) },
            "\(option.name) is read but not declared, so --help does not show it")
    }

    /// Removes and returns the value of `--name value` or `--name=value`.
    /// - Throws: ``UsageError`` when `--name` is the last argument (or is followed only by `--`), or
    ///   is given more than once (its second value would otherwise be read as an argument).
    package mutating func option(_ option: CommandLineOption) throws(UsageError) -> String? {
        let value = try first(option)
        if value != nil,
            let again = tokens.first(where: { token in
                !token.taken && token.looksLikeOption && option.names.contains(token.optionName)
            })
        {
            throw UsageError("\(again.optionName) is given more than once")
        }
        return value
    }

    /// Removes and returns a path option's value.
    /// - Throws: ``UsageError`` when it is given more than once, or empty (which would mean the
    ///   current directory).
    package mutating func path(_ option: CommandLineOption) throws(UsageError) -> String? {
        guard let value = try self.option(option) else { return nil }
        guard !value.isEmpty else { throw UsageError("\(option.name) needs a path, not an empty value") }
        return value
    }

    /// Removes and returns the value of the first `--name value` or `--name=value`.
    private mutating func first(_ option: CommandLineOption) throws(UsageError) -> String? {
        checkDeclared(option)
        assert(!option.isFlag, "\(option.name) is a flag")
        for index in tokens.indices where !tokens[index].taken && tokens[index].looksLikeOption {
            let text = tokens[index].text
            for name in option.names {
                if text.hasPrefix(name + "=") {
                    tokens[index].taken = true
                    return String(text.dropFirst(name.count + 1))
                }
                if text == name {
                    tokens[index].taken = true
                    let next = index + 1
                    guard next < tokens.count, !tokens[next].taken, !tokens[next].isPositionalOnly else {
                        throw UsageError("\(name) needs a value")
                    }
                    tokens[next].taken = true
                    return tokens[next].text
                }
            }
        }
        return nil
    }

    /// Removes and returns the values of every `--name value` / `--name=value`, in order (an option
    /// that may be repeated).
    /// - Throws: ``UsageError`` when one of them has no value.
    package mutating func options(_ option: CommandLineOption) throws(UsageError) -> [String] {
        var values: [String] = []
        while let value = try first(option) { values.append(value) }
        return values
    }

    /// Removes and returns an integer option, checking its range.
    /// - Throws: ``UsageError`` when it has no value, or one that is not an integer within `range`.
    package mutating func integer(_ option: CommandLineOption, in range: ClosedRange<Int>) throws(UsageError)
        -> Int?
    {
        guard let text = try self.option(option) else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw UsageError(
                "\(option.name) must be an integer within \(range.lowerBound)...\(range.upperBound), got '\(text)'"
            )
        }
        return value
    }

    /// The duration given for `option`: `500ms`, `5s`, `1.5s`, `1m`, or a bare number of milliseconds.
    /// - Throws: ``UsageError`` when it has no value, or one that is not a duration within `range`.
    package mutating func duration(_ option: CommandLineOption, in range: ClosedRange<Duration>)
        throws(UsageError) -> Duration?
    {
        guard let text = try self.option(option) else { return nil }
        let units: [(String, Double)] = [("ms", 1), ("s", 1000), ("m", 60_000)]
        var milliseconds: Double?
        if let plain = Double(text) {
            milliseconds = plain
        } else if let (unit, scale) = units.first(where: { text.hasSuffix($0.0) }),
            let value = Double(text.dropLast(unit.count))
        {
            milliseconds = value * scale
        }
        // Below 2^62 ms before the conversion: a larger number does not fit an Int64 (and no range
        // here reaches it).
        guard let milliseconds, milliseconds.isFinite, milliseconds >= 0, milliseconds < 0x1p62,
            range.contains(.milliseconds(Int64(milliseconds.rounded())))
        else {
            throw UsageError(
                "\(option.name) must be a duration such as 500ms, 5s or 1m (or milliseconds) within \(range.lowerBound)...\(range.upperBound), got '\(text)'"
            )
        }
        return .milliseconds(Int64(milliseconds.rounded()))
    }

    /// Removes the flag (in any of its spellings) and says whether it was there.
    package mutating func flag(_ option: CommandLineOption) -> Bool {
        checkDeclared(option)
        assert(option.isFlag, "\(option.name) takes a value")
        guard
            let index = tokens.indices.first(where: {
                !tokens[$0].taken && tokens[$0].looksLikeOption && option.names.contains(tokens[$0].text)
            })
        else { return false }
        tokens[index].taken = true
        return true
    }

    /// Removes and returns the next positional argument (by position: read a command's options
    /// before its positionals, so that an option's value is not taken for one).
    package mutating func positional() -> String? {
        guard let index = tokens.indices.first(where: { !tokens[$0].taken && !tokens[$0].looksLikeOption })
        else { return nil }
        tokens[index].taken = true
        return tokens[index].text
    }

    /// Removes and returns every remaining positional argument.
    package mutating func remainingPositionals() -> [String] {
        var rest: [String] = []
        while let next = positional() { rest.append(next) }
        return rest
    }

    /// The error for the first option not consumed that the command does not declare at all: it
    /// explains a usage error better than what it left missing (`publish --bogus` has no EVENT
    /// because `--bogus` is no option). Nil when there is none.
    package func unknownOption() -> UsageError? {
        let left = tokens.filter { !$0.taken && $0.looksLikeOption }
        guard
            let option = left.first(where: { token in
                !declared.contains { $0.names.contains(token.optionName) }
            })
        else { return nil }
        let names = declared.flatMap(\.names).filter { $0.hasPrefix("--") }
        return UsageError(
            "unknown option '\(option.optionName)'\(Suggestion.phrase(for: option.optionName, in: names))")
    }

    /// Fails on anything not consumed.
    /// - Throws: ``UsageError`` naming the first unknown option (and the nearest declared one), a
    ///   declared option this form of the command does not use, or an unexpected argument.
    package func finish() throws(UsageError) {
        let left = tokens.filter { !$0.taken }
        if let option = left.first(where: \.looksLikeOption) {
            let name = option.optionName
            if let known = declared.first(where: { $0.names.contains(name) }) {
                // Read once already: the same option again.
                if tokens.contains(where: {
                    $0.taken && $0.looksLikeOption && known.names.contains($0.optionName)
                }) {
                    throw UsageError("\(name) is given more than once")
                }
                throw UsageError("\(name) does not apply here")
            }
            let names = declared.flatMap(\.names).filter { $0.hasPrefix("--") }
            throw UsageError("unknown option '\(name)'\(Suggestion.phrase(for: name, in: names))")
        }
        if let extra = left.first { throw UsageError("unexpected argument '\(extra.text)'") }
    }
}

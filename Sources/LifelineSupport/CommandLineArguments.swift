/// A command line that was used wrongly: exit status 2 and one sentence.
public struct UsageError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// A small reader of `--option value`, `--option=value`, flags and positional arguments, shared by
/// the CLI and service executables. Options may appear anywhere; `--` ends option parsing.
public struct CommandLineArguments: Sendable {
    private var options: [String] = []
    private var positionals: [String] = []

    /// The arguments of this process, without the executable.
    public static var process: CommandLineArguments {
        CommandLineArguments(Array(CommandLine.arguments.dropFirst()))
    }

    public init(_ arguments: [String]) {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--" {
                positionals += arguments[(index + 1)...]
                break
            }
            if argument.hasPrefix("-") && argument.count > 1 && Double(argument) == nil {
                options.append(argument)
            } else {
                positionals.append(argument)
            }
            index += 1
        }
        self.raw = arguments
    }

    private let raw: [String]

    /// Removes and returns the value of `--name value` or `--name=value`.
    public mutating func option(_ name: String) throws(UsageError) -> String? {
        for (index, argument) in options.enumerated() {
            if argument.hasPrefix(name + "=") {
                options.remove(at: index)
                return String(argument.dropFirst(name.count + 1))
            }
            if argument == name {
                options.remove(at: index)
                guard let value = valueAfter(name) else { throw UsageError("\(name) needs a value") }
                return value
            }
        }
        return nil
    }

    /// Removes and returns an integer option, checking its range.
    public mutating func integer(_ name: String, in range: ClosedRange<Int>) throws(UsageError) -> Int? {
        guard let text = try option(name) else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw UsageError(
                "\(name) must be an integer within \(range.lowerBound)...\(range.upperBound), got '\(text)'")
        }
        return value
    }

    /// The duration given for `name`: `500ms`, `5s`, `1.5s`, `1m`, or a bare number of milliseconds.
    public mutating func duration(_ name: String, in range: ClosedRange<Duration>) throws(UsageError)
        -> Duration?
    {
        guard let text = try option(name) else { return nil }
        let units: [(String, Double)] = [("ms", 1), ("s", 1000), ("m", 60_000)]
        var milliseconds: Double?
        if let plain = Double(text) {
            milliseconds = plain
        } else if let (unit, scale) = units.first(where: { text.hasSuffix($0.0) }),
            let value = Double(text.dropLast(unit.count))
        {
            milliseconds = value * scale
        }
        guard let milliseconds, milliseconds.isFinite, milliseconds >= 0,
            range.contains(.milliseconds(Int64(milliseconds.rounded())))
        else {
            throw UsageError(
                "\(name) must be a duration such as 500ms, 5s or 1m (or milliseconds) within \(range.lowerBound)...\(range.upperBound), got '\(text)'"
            )
        }
        return .milliseconds(Int64(milliseconds.rounded()))
    }

    /// The value that followed `name` in the original order; taken out of the positionals.
    private mutating func valueAfter(_ name: String) -> String? {
        guard let position = raw.firstIndex(of: name), position + 1 < raw.count else { return nil }
        let value = raw[position + 1]
        if let index = positionals.firstIndex(of: value) {
            positionals.remove(at: index)
            return value
        }
        if let index = options.firstIndex(of: value) {
            options.remove(at: index)
            return value
        }
        return nil
    }

    /// Removes `name` (or any of its spellings) and says whether it was there.
    public mutating func flag(_ names: String...) -> Bool {
        guard let index = options.firstIndex(where: { names.contains($0) }) else { return false }
        options.remove(at: index)
        return true
    }

    /// Removes and returns the next positional argument.
    public mutating func positional() -> String? { positionals.isEmpty ? nil : positionals.removeFirst() }

    /// Removes and returns every remaining positional argument.
    public mutating func remainingPositionals() -> [String] {
        defer { positionals.removeAll() }
        return positionals
    }

    /// Fails on anything not consumed.
    public func finish() throws(UsageError) {
        if let option = options.first { throw UsageError("unknown option '\(option)'") }
        if let extra = positionals.first { throw UsageError("unexpected argument '\(extra)'") }
    }
}

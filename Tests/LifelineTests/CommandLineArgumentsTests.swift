import LifelineSupport
import Testing

@Suite("The command-line reader: declared options, tokens by position", .timeLimit(.minutes(1)))
struct CommandLineArgumentsTests {
    static let opt = CommandLineOption.value("--opt", "X", help: "an option")
    static let name = CommandLineOption.value("--name", "NAME", help: "a name")
    static let payload = CommandLineOption.value("--payload", "P", help: "a payload")
    static let number = CommandLineOption.value("--n", "N", help: "a number")
    static let tag = CommandLineOption.value("--tag", "T", help: "a tag, repeatable")
    static let json = CommandLineOption.flag("--json", help: "print JSON")
    static let timeout = CommandLineOption.value("--timeout", "T", help: "how long to wait")
    static let verbose = CommandLineOption.flag("-v", "--verbose", help: "say more")

    static func reading(_ tokens: [String]) -> CommandLineArguments {
        CommandLineArguments(tokens, declaring: [opt, name, payload, number, tag, json, timeout, verbose])
    }

    @Test("an option's value is the token after it, not another token with the same text")
    func positionCorrect() throws {
        var arguments = Self.reading(["a", "b", "--opt", "a"])
        #expect(try arguments.option(Self.opt) == "a")
        #expect(arguments.remainingPositionals() == ["a", "b"])
        try arguments.finish()
    }

    @Test("--opt=value, values that look like options, negative numbers, and every spelling of a flag")
    func forms() throws {
        var arguments = Self.reading(["--name=x=y", "--payload", "--weird", "-5", "--n", "-3", "-v"])
        #expect(try arguments.option(Self.name) == "x=y")
        #expect(try arguments.option(Self.payload) == "--weird")
        #expect(try arguments.integer(Self.number, in: -10...10) == -3)
        let short = arguments.flag(Self.verbose)
        #expect(short)
        #expect(arguments.positional() == "-5")
        try arguments.finish()
        var long = Self.reading(["--verbose"])
        let spelt = long.flag(Self.verbose)
        #expect(spelt)
    }

    @Test("a repeated option is read once per occurrence, in order")
    func repeated() throws {
        var arguments = Self.reading(["--tag", "a", "x", "--tag=b", "--tag", "c"])
        #expect(try arguments.options(Self.tag) == ["a", "b", "c"])
        #expect(arguments.remainingPositionals() == ["x"])
    }

    @Test("-- ends the options: what follows is positional, even --flag")
    func terminator() throws {
        var arguments = Self.reading(["--json", "--", "--json", "-"])
        let first = arguments.flag(Self.json)
        let second = arguments.flag(Self.json)
        #expect(first && !second, "the second --json comes after --")
        #expect(arguments.remainingPositionals() == ["--json", "-"])
        try arguments.finish()
    }

    @Test("a missing value, an unknown option, an unused one and an extra argument are each named")
    func errors() throws {
        var last = Self.reading(["x", "--timeout"])
        #expect(throws: UsageError("--timeout needs a value")) { try last.option(Self.timeout) }
        var beforeTerminator = Self.reading(["--timeout", "--", "5"])
        #expect(throws: UsageError("--timeout needs a value")) { try beforeTerminator.option(Self.timeout) }
        let unknown = Self.reading(["--colour=red"])
        #expect(throws: UsageError("unknown option '--colour'")) { try unknown.finish() }
        // The suggestion comes from the declarations, whether or not the command read the option yet.
        let misspelt = Self.reading(["--tmeout", "5s"])
        #expect(throws: UsageError("unknown option '--tmeout'; did you mean '--timeout'?")) {
            try misspelt.finish()
        }
        let unused = Self.reading(["--json"])
        #expect(throws: UsageError("--json does not apply here")) { try unused.finish() }
        var twice = Self.reading(["--json", "--json"])
        let first = twice.flag(Self.json)
        #expect(first)
        #expect(throws: UsageError("--json is given more than once")) { try twice.finish() }
        // A value option read before the positionals: its second value is not taken for one.
        var again = Self.reading(["--timeout", "1s", "--timeout=2s", "event"])
        #expect(throws: UsageError("--timeout is given more than once")) { try again.option(Self.timeout) }
        var extra = Self.reading(["one", "two"])
        _ = extra.positional()
        #expect(throws: UsageError("unexpected argument 'two'")) { try extra.finish() }
        var range = Self.reading(["--n", "99"])
        #expect(throws: UsageError("--n must be an integer within 1...10, got '99'")) {
            try range.integer(Self.number, in: 1...10)
        }
        var duration = Self.reading(["--timeout", "soon"])
        #expect(
            throws: UsageError(
                "--timeout must be a duration such as 500ms, 5s or 1m (or milliseconds) within 0.001 seconds...5.0 seconds, got 'soon'"
            )
        ) { try duration.duration(Self.timeout, in: .milliseconds(1) ... .seconds(5)) }
        // Past what an Int64 of milliseconds holds: the same sentence, not a trap.
        for huge in ["9223372036854775807", "1e19", "1e300", "9999999999999999s", "1e16m"] {
            var arguments = Self.reading(["--timeout", huge])
            #expect(
                throws: UsageError(
                    "--timeout must be a duration such as 500ms, 5s or 1m (or milliseconds) within 0.001 seconds...5.0 seconds, got '\(huge)'"
                )
            ) { try arguments.duration(Self.timeout, in: .milliseconds(1) ... .seconds(5)) }
        }
    }

    @Test("durations: 500ms, 1.5s, 1m and bare milliseconds")
    func durations() throws {
        for (text, expected) in [("500ms", 500), ("1.5s", 1500), ("1m", 60_000), ("250", 250)] {
            var arguments = Self.reading(["--timeout", text])
            let duration = try arguments.duration(Self.timeout, in: .zero ... .seconds(60))
            #expect(duration == .milliseconds(expected), "\(text)")
        }
    }

    @Test("the help is made from the same declarations: aligned, wrapped at 100 columns, -h last")
    func help() {
        let long = CommandLineOption.value(
            "--max-names-per-connection", "N",
            help:
                "names one connection may register; beyond it every further REGISTER is refused with 429 (default 100)"
        )
        let text = CommandLineOption.helpText([Self.json, Self.verbose, long, .helpFlag])
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.allSatisfy { $0.count <= 100 }, "\(lines.map(\.count))")
        #expect(lines[0].hasPrefix("  --json ") && lines[0].hasSuffix("print JSON"))
        #expect(lines[1].hasPrefix("  -v, --verbose "))
        #expect(
            lines[2] == "  --max-names-per-connection N", "a label wider than the column has its help below")
        #expect(lines.last?.hasPrefix("  -h, --help") == true)
        let column = lines[0].distance(
            from: lines[0].startIndex, to: lines[0].firstRange(of: "print")!.lowerBound)
        #expect(lines[3].prefix(column).allSatisfy { $0 == " " } && lines[3].dropFirst(column).first != " ")
    }
}

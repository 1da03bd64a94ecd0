import LifelineSupport
import Testing

@Suite("The command-line reader: tokens by position", .timeLimit(.minutes(1)))
struct CommandLineArgumentsTests {
    @Test("an option's value is the token after it, not another token with the same text")
    func positionCorrect() throws {
        var arguments = CommandLineArguments(["a", "b", "--opt", "a"])
        #expect(try arguments.option("--opt") == "a")
        #expect(arguments.remainingPositionals() == ["a", "b"])
        try arguments.finish()
    }

    @Test("--opt=value, values that look like options, and negative numbers")
    func forms() throws {
        var arguments = CommandLineArguments(["--name=x=y", "--payload", "--weird", "-5", "--n", "-3"])
        #expect(try arguments.option("--name") == "x=y")
        #expect(try arguments.option("--payload") == "--weird")
        #expect(try arguments.integer("--n", in: -10...10) == -3)
        #expect(arguments.positional() == "-5")
        try arguments.finish()
    }

    @Test("a repeated option is read once per occurrence, in order")
    func repeated() throws {
        var arguments = CommandLineArguments(["--tag", "a", "x", "--tag=b", "--tag", "c"])
        #expect(try arguments.options("--tag") == ["a", "b", "c"])
        #expect(arguments.remainingPositionals() == ["x"])
    }

    @Test("-- ends the options: what follows is positional, even --flag")
    func terminator() throws {
        var arguments = CommandLineArguments(["--json", "--", "--json", "-"])
        let first = arguments.flag("--json")
        let second = arguments.flag("--json")
        #expect(first && !second, "the second --json comes after --")
        #expect(arguments.remainingPositionals() == ["--json", "-"])
        try arguments.finish()
    }

    @Test("a missing value, an unknown option and an extra argument are each named")
    func errors() throws {
        var last = CommandLineArguments(["x", "--timeout"])
        #expect(throws: UsageError("--timeout needs a value")) { try last.option("--timeout") }
        var beforeTerminator = CommandLineArguments(["--timeout", "--", "5"])
        #expect(throws: UsageError("--timeout needs a value")) { try beforeTerminator.option("--timeout") }
        let unknown = CommandLineArguments(["--colour=red"])
        #expect(throws: UsageError("unknown option '--colour'")) { try unknown.finish() }
        var misspelt = CommandLineArguments(["--tmeout", "5s"])
        #expect(try misspelt.option("--timeout") == nil)
        _ = misspelt.flag("--json")
        #expect(throws: UsageError("unknown option '--tmeout'; did you mean '--timeout'?")) {
            try misspelt.finish()
        }
        var extra = CommandLineArguments(["one", "two"])
        _ = extra.positional()
        #expect(throws: UsageError("unexpected argument 'two'")) { try extra.finish() }
        var range = CommandLineArguments(["--n", "99"])
        #expect(throws: UsageError("--n must be an integer within 1...10, got '99'")) {
            try range.integer("--n", in: 1...10)
        }
    }
}

@preconcurrency import Glibc
import LifelineProtocol
import LifelineSupport

extension Service {
    /// Runs the service as the main program: reads the standard options (``ServiceRunner.Options``) from
    /// the command line, stops gracefully on SIGINT / SIGTERM and exits 0; exits 1 when the broker
    /// refuses the service and 2 on a bad command line. `about` and `usage` add to `--help`.
    public func main(about: String = "", usage extraUsage: String = "") async -> Never {
        await main(
            arguments: .process(declaring: ServiceRunner.Options.declared), about: about, usage: extraUsage)
    }

    /// ``main(about:usage:)`` over arguments a program has read some of its own options from; they
    /// declare the program's options and ``ServiceRunner.Options/declared``, and `--help` lists them all.
    package func main(
        arguments: CommandLineArguments, about: String = "", usage extraUsage: String = ""
    ) async -> Never {
        // A service's `print` lines reach a pipe (a supervisor, a test, `lifeline up`'s log) at once.
        setvbuf(stdout, nil, _IOLBF, 0)
        var arguments = arguments
        let executable =
            CommandLine.arguments.first.map { String($0.split(separator: "/").last ?? "") } ?? name
        if arguments.flag(.helpFlag) {
            let declared = arguments.declared.filter { !$0.isSame(as: .helpFlag) } + [.helpFlag]
            let extra = extraUsage.isEmpty ? "" : extraUsage + "\n"
            Console.out(
                "usage: \(executable) [options]\(about.isEmpty ? "" : "\n\n" + about)\n\noptions:\n\(extra)\(CommandLineOption.helpText(declared))"
            )
            exit(0)
        }
        let options: ServiceRunner.Options
        do {
            options = try ServiceRunner.Options(parsing: &arguments)
            try arguments.finish()
        } catch {
            Console.error("\(executable): \(error.message)\ntry '\(executable) --help'")
            exit(2)
        }
        let runner = ServiceRunner(self, options: options)
        let watcher = SignalWatcher { number in
            Console.log(runner.name, "received signal \(number); unregistering and stopping")
            SystemdNotifier.notify("STOPPING=1")
            runner.stop()
        }
        do {
            try await runner.run()
            withExtendedLifetime(watcher) {}
            exit(0)
        } catch {
            Console.log(runner.name, "\(error)", level: .error)
            exit(1)
        }
    }
}

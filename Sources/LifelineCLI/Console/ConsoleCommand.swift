import Foundation
import Glibc
import Lifeline
import LifelineProtocol
import LifelineSupport

/// `lifeline console`: a live web page of the running system.
enum ConsoleCommand: CLICommand {
    static let name = "console"
    static let summary = "serve a live web page of the services, the bus, the stack, the boot and traces"
    static let defaultListen = "127.0.0.1:7290"
    static let usage = """
        usage: lifeline console [--listen HOST:PORT] [--token-file FILE] [options]

        Serves one page, live without reloading: the services with their calls, the bus (events per
        second by name and a tail of the latest events), the micro-app stack, the boot's timeline,
        traces while their view is open, and actions (publish, call, apps, dispatch, boot). Prints
        'READY http://HOST:PORT/' once it listens; open that address in a browser. All of the page is
        in this binary: nothing is fetched from the network.

        It is a client of the broker: with CURVE it shows and does what its key may (LIST, STATS and
        TRACE need 'observe'; the actions are checked as the CLI's are). It listens on loopback
        unless --listen names another address, and then only with --token-file: open the page once
        as http://HOST:PORT/?token=TOKEN and it keeps the token in a cookie. Actions always need the
        page's token, so no other site can act through it.
        """
    static let listen = CommandLineOption.value(
        "--listen", "HOST:PORT", help: "where the page is served (default \(defaultListen); port 0 picks one)"
    )
    static let tokenFile = CommandLineOption.value(
        "--token-file", "FILE",
        help: "a file holding the token the page needs (at least 16 characters); required beyond loopback")
    static let options = [
        listen, tokenFile, ClientOptions.broker, LifelineClient.Credentials.keyOption,
        LifelineClient.Credentials.brokerKeyOption,
    ]

    static func run(_ arguments: inout CommandLineArguments) throws -> Int32 {
        let broker = try arguments.option(ClientOptions.broker) ?? LifelineClient.defaultBroker
        if let problem = Endpoint.problem(inList: broker) { throw UsageError("--broker: \(problem)") }
        let keyFile =
            try arguments.option(LifelineClient.Credentials.keyOption)
            ?? ProcessInfo.processInfo.environment["LIFELINE_KEY"]
        let brokerKey =
            try arguments.option(LifelineClient.Credentials.brokerKeyOption)
            ?? ProcessInfo.processInfo.environment["LIFELINE_BROKER_KEY"]
        var keys = CommandLineArguments(
            (keyFile.map { ["--key", $0] } ?? []) + (brokerKey.map { ["--broker-key", $0] } ?? []),
            declaring: [LifelineClient.Credentials.keyOption, LifelineClient.Credentials.brokerKeyOption])
        let credentials = try LifelineClient.Credentials.parse(&keys)
        let address = try arguments.option(Self.listen) ?? defaultListen
        let tokenPath = try arguments.option(Self.tokenFile)
        let token = try tokenPath.map(readToken) ?? randomToken()
        let tokenGiven = tokenPath != nil
        try arguments.finish()

        let state = ConsoleState()
        var environment = ["LIFELINE_BROKER": broker]
        if credentials != nil {
            environment["LIFELINE_KEY"] = keyFile
            environment["LIFELINE_BROKER_KEY"] = brokerKey
        }
        let actions = ConsoleActions(
            executable: URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path,
            environment: environment)
        let server: ConsoleServer
        do {
            server = try ConsoleServer(
                address: address, token: token, tokenForReading: tokenGiven, state: state, actions: actions)
        } catch {
            throw UsageError("--listen: \(error.message)")
        }
        guard server.listener.isLoopback || tokenGiven else {
            server.listener.stop()
            throw UsageError(
                "--listen \(address) is reachable beyond this machine: give --token-file FILE, or listen on 127.0.0.1"
            )
        }
        let feed = ConsoleFeed(broker: broker, credentials: credentials, state: state)
        feed.start()
        let done = DispatchSemaphore(value: 0)
        let watcher = SignalWatcher { _ in done.signal() }
        Console.log("console", "serving \(server.url) for the broker at \(broker)")
        if tokenGiven {
            Console.log(
                "console", "open it once as \(server.url)?token=TOKEN (the token in the --token-file)")
        }
        Console.out("READY \(server.url)")
        done.wait()
        feed.stop()
        server.listener.stop()
        withExtendedLifetime(watcher) {}
        return 0
    }

    private static func readToken(_ path: String) throws(UsageError) -> String {
        // Refused, as key files are, when anyone but its owner may read it.
        let token: String
        do {
            token = try KeyFile.secret(path)
        } catch {
            throw UsageError("--token-file: \(error.description)")
        }
        guard token.count >= 16,
            token.unicodeScalars.allSatisfy({ (0x21...0x7E).contains($0.value) && $0 != ";" })
        else {
            throw UsageError(
                "--token-file: '\(path)' must hold one token of at least 16 printable characters (no spaces or ';')"
            )
        }
        return token
    }

    private static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }
            .joined()
    }
}

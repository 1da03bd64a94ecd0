import CartAPI
import Foundation
import Lifeline
import LifelineProtocol
import LifelineSupport
import Synchronization
import Testing

@Suite("Real processes: actors by key on several instances", .serialized, .timeLimit(.minutes(4)))
struct KeyedActorProcessTests {
    /// A cart store and activation journal of their own, for instances of lifeline-cart to share.
    struct CartFiles {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lifeline-carts-\(UUID().uuidString)")
        var journal: URL { directory.appendingPathExtension("journal") }
        var environment: [String: String] {
            ["LIFELINE_CART_STORE": directory.path, "LIFELINE_CART_JOURNAL": journal.path]
        }

        func remove() {
            try? FileManager.default.removeItem(at: directory)
            try? FileManager.default.removeItem(at: journal)
        }
    }

    static func cart(_ broker: BrokerProcess, _ files: CartFiles) async throws -> ChildProcess {
        let child = try ChildProcess(
            "lifeline-cart", ["--broker", broker.control], environment: files.environment)
        try await child.waitForLine(startingWith: "READY service=")
        return child
    }

    @Test("the CLI calls an actor by key and lists the placements; bad keys and services are clear errors")
    func cli() async throws {
        let files = CartFiles()
        defer { files.remove() }
        let broker = try await BrokerProcess()
        defer { broker.process.kill() }
        let first = try await Self.cart(broker, files)
        defer { first.kill() }
        let second = try await Self.cart(broker, files)
        defer { second.kill() }
        let added = try await broker.cli(["call", "cart/ana", "add", "item=tea", "quantity:=2"])
        #expect(added.status == 0, "\(added.errors)")
        let contents = try JSONParser.parse(added.output)
        #expect(contents["items"] == 2 && contents["user"] == "ana")
        let bob = try await broker.cli(["call", "cart/bob", "add", "item=jam", "quantity:=1"])
        #expect(bob.status == 0)
        let servedBy = [
            contents["servedBy"]?.intValue, try JSONParser.parse(bob.output)["servedBy"]?.intValue,
        ]
        #expect(
            Set(servedBy.compactMap { $0.map(Int32.init) })
                == [first.process.processIdentifier, second.process.processIdentifier],
            "the second key goes to the instance with fewer")

        let table = try await broker.cli(["actors", "cart"])
        #expect(table.status == 0)
        #expect(table.stdout.first?.hasPrefix("ACTOR") == true && table.stdout.count == 3, "\(table.output)")
        #expect(table.stdout.dropFirst().map { String($0.prefix(8)) } == ["cart/ana", "cart/bob"])
        let listed = try await broker.cli(["actors", "--json"])
        let placements = try (JSONParser.parse(listed.output)["actors"]?.arrayValue ?? []).map {
            try ActorPlacement(json: $0)
        }
        #expect(placements.map(\.key) == ["ana", "bob"] && placements.allSatisfy { $0.service == "cart" })

        // The console shows the placements, in its state and on its page.
        let console = try await ConsoleProcess(broker: broker.control)
        defer { console.process.kill() }
        var shown: [String] = []
        for _ in 0..<100 where shown.count < 2 {
            let state = try JSONParser.parse(Array(try await console.fetch("/api/state").body.utf8))
            shown = (state["actors"]?["actors"]?.arrayValue ?? []).compactMap { actor in
                actor["key"]?.stringValue.map { "\(actor["service"]?.stringValue ?? "")/\($0)" }
            }
            if shown.count < 2 { try await Task.sleep(for: .milliseconds(100)) }  // polling with a deadline
        }
        #expect(shown == ["cart/ana", "cart/bob"])
        if Browser.available {
            try await Browser.with { browser in
                try await browser.open(console.url)
                try await browser.waitFor(
                    "cart/ana on the page",
                    #"return document.querySelector('#actors tr[data-actor="cart/ana"][data-state="placed"]') !== null"#
                )
                #expect(try await browser.severeLogs() == [])
            }
        }

        let badKey = try await broker.cli(["call", "cart/a b", "contents"])
        #expect(badKey.status == 2)
        #expect(
            badKey.errors.contains("actor key 'a b' may contain only letters, digits and _ - . : @ + = /"))
        let keyless = try await broker.cli(["call", "cart", "contents"])
        #expect(keyless.status == 1)
        #expect(
            keyless.errors.contains("400 bad request: 'contents' of 'cart' is a method of its actors by key"))
        let refused = try await broker.cli(["call", "cart/ana", "add", "item=tea", "quantity:=0"])
        #expect(refused.status == 1 && refused.errors.contains("422 unprocessable: quantity must be within"))
        let unknown = try await broker.cli(["actors", "nope"])
        #expect(
            unknown.status == 1 && unknown.errors.contains("no service named 'nope'"), "\(unknown.errors)")
    }

    @Test(
        "instances killed -9 and restarted under a call loop over many keys: no key ever active twice at once, every call answered or failed retryably, no completed call's change lost"
    )
    func killedUnderCalls() async throws {
        let keys = ChaosTests.setting("LIFELINE_ACTOR_KEYS", 60)
        let kills = ChaosTests.setting("LIFELINE_ACTOR_KILLS", 3)
        let interval = ChaosTests.setting("LIFELINE_ACTOR_INTERVAL_MS", 0)
        let files = CartFiles()
        defer { files.remove() }
        let broker = try await BrokerProcess()
        defer { broker.process.kill() }
        let running = Mutex<[ChildProcess]>([])
        defer { running.withLock { for instance in $0 { instance.kill() } } }
        for _ in 0..<3 {
            let instance = try await Self.cart(broker, files)
            running.withLock { $0.append(instance) }
        }
        let tally = CartCallTally(keys: keys)
        let client = LifelineClient(broker: broker.control)
        let loops = (0..<8).map { loop in Task { await tally.loop(client, first: loop) } }
        var deaths: [Int32: UInt64] = [:]
        for round in 0..<kills {
            let answered = tally.answered
            if interval > 0 {
                try await Task.sleep(for: .milliseconds(interval))  // the chaos script's pace
            } else {
                try await LifecycleSemanticsTests.poll(seconds: 90) {
                    tally.answered >= answered + 3 * keys / 2
                }
            }
            let victim = running.withLock { $0.remove(at: round % $0.count) }
            victim.kill(SIGKILL)
            _ = try await victim.waitForExit()
            deaths[victim.process.processIdentifier] = SystemClock.monotonicNanoseconds()
            let restarted = try await Self.cart(broker, files)
            running.withLock { $0.append(restarted) }
        }
        let answered = tally.answered
        try await LifecycleSemanticsTests.poll(seconds: 90) { tally.answered >= answered + keys }
        tally.stop()
        for loop in loops { await loop.value }
        let lost = try await tally.cartsOff(client)
        running.withLock { for instance in $0 { instance.kill(SIGTERM) } }
        for instance in running.withLock({ $0 }) { _ = try await instance.waitForExit(seconds: 20) }
        let overlaps = ActivationJournal(file: files.journal, deaths: deaths).overlaps()
        print(
            "actors by key: \(keys) keys, 3 instances, \(kills) kills: \(tally.summary), activations \(ActivationJournal(file: files.journal, deaths: deaths).starts), overlapping \(overlaps.count), carts off \(lost)"
        )
        #expect(overlaps.isEmpty, "\(overlaps.prefix(5))")
        #expect(tally.otherFailures.isEmpty, "\(tally.otherFailures.prefix(5))")
        #expect(lost == 0)
        #expect(tally.answered > 0)
        await client.close()
    }

    @Test(
        "a broker group's leader killed -9 twice under a call loop over keys: no key ever active twice at once, every call answered or failed retryably, no completed call's change lost",
        .enabled(
            if: EtcdProcess.available, "etcd is not installed (deploy/test.sh installs etcd-server as root)"))
    func groupFailover() async throws {
        let keys = ChaosTests.setting("LIFELINE_ACTOR_GROUP_KEYS", 30)
        let rig = try await GroupRig(services: 1, events: 100)
        defer { rig.stop() }
        let files = CartFiles()
        defer { files.remove() }
        let running = Mutex<[ChildProcess]>([])
        defer { running.withLock { for instance in $0 { instance.kill() } } }
        for _ in 0..<2 {
            let child = try ChildProcess(
                "lifeline-cart", ["--broker", rig.brokers], environment: files.environment)
            running.withLock { $0.append(child) }
            try await child.waitForLine(startingWith: "READY service=", seconds: 30)
        }
        let tally = CartCallTally(keys: keys)
        let client = LifelineClient(broker: rig.brokers)
        let loops = (0..<4).map { loop in Task { await tally.loop(client, first: loop, timeout: .seconds(2)) }
        }
        for kill in 1...2 {
            let answered = tally.answered
            try await LifecycleSemanticsTests.poll(seconds: 60) { tally.answered >= answered + keys }
            guard let leader = rig.leader else {
                Issue.record("no member leads before kill \(kill)")
                break
            }
            let before = tally.answered
            leader.process.kill(SIGKILL)
            let services = running.withLock { $0 }.map { ("lifeline-cart", $0) }
            try await GroupRig.showingLogs(of: rig.members, services: services) {
                do {
                    try await LifecycleSemanticsTests.poll(seconds: 60) { tally.answered >= before + keys }
                } catch {
                    print(
                        "calls after leader kill \(kill): \(tally.summary); \(tally.otherFailures.prefix(3))")
                    throw error
                }
            }
            try await leader.restart()
            try await rig.showingLogs {
                try await LifecycleSemanticsTests.poll(seconds: 30) {
                    leader.process.lines().contains { $0.hasPrefix("STANDBY ") || $0.hasPrefix("READY ") }
                }
            }
        }
        tally.stop()
        for loop in loops { await loop.value }
        let lost = try await tally.cartsOff(client)
        let instances = running.withLock { $0 }
        for instance in instances { instance.kill(SIGTERM) }
        for instance in instances { _ = try await instance.waitForExit(seconds: 20) }
        let journal = ActivationJournal(file: files.journal, deaths: [:])
        let overlaps = journal.overlaps()
        print(
            "actors by key, group: \(keys) keys, 2 instances, 2 leader kills: \(tally.summary), activations \(journal.starts), overlapping \(overlaps.count), carts off \(lost)"
        )
        if !overlaps.isEmpty {
            for instance in instances {
                print("cart \(instance.pid): " + instance.lines(.stderr).suffix(40).joined(separator: "\n"))
            }
        }
        for key in Set(overlaps.map { String($0.prefix { $0 != ":" }) }).sorted().prefix(3) {
            print(
                "journal of \(key): \(journal.lines.filter { $0.key == key }.map { "\($0.start ? "start" : "stop") \($0.pid) \($0.at)" })"
            )
        }
        #expect(overlaps.isEmpty, "\(overlaps.prefix(5))")
        #expect(tally.otherFailures.isEmpty, "\(tally.otherFailures.prefix(5))")
        #expect(lost == 0)
        await client.close()
    }
}

/// Adds to carts `u0`…`uN` from several loops, counting per key what was answered and what failed.
final class CartCallTally: Sendable {
    let keys: Int
    private struct State {
        var done: [Int]
        var uncertain: [Int]
        var answered = 0
        var retryable = 0
        var other: [String] = []
        var stopped = false
    }
    private let state: Mutex<State>

    init(keys: Int) {
        self.keys = keys
        state = Mutex(
            State(done: Array(repeating: 0, count: keys), uncertain: Array(repeating: 0, count: keys)))
    }

    var answered: Int { state.withLock { $0.answered } }
    var otherFailures: [String] { state.withLock { $0.other } }
    var summary: String {
        state.withLock {
            "\($0.answered) calls answered, \($0.retryable) failed retryably, \($0.other.count) otherwise"
        }
    }

    /// How many carts hold other than the adds answered: what each holds now against them (an add
    /// that failed 503 may have been saved before its instance died: it may count, once).
    func cartsOff(_ client: LifelineClient) async throws -> Int {
        var off = 0
        for key in 0..<keys {
            let contents = try await client.call("cart/u\(key)", "contents", timeout: .seconds(20))
            let items = contents["items"]?.intValue ?? -1
            let (done, uncertain) = counts(key)
            if items < done || items > done + uncertain { off += 1 }
        }
        return off
    }

    func counts(_ key: Int) -> (done: Int, uncertain: Int) {
        state.withLock { ($0.done[key], $0.uncertain[key]) }
    }

    func stop() { state.withLock { $0.stopped = true } }

    func loop(_ client: LifelineClient, first: Int, timeout: Duration = .seconds(10)) async {
        var key = first % keys
        while !state.withLock({ $0.stopped }) {
            key = (key + 7) % keys
            do {
                _ = try await client.call(
                    "cart/u\(key)", "add", ["item": "tea", "quantity": 1], timeout: timeout)
                state.withLock {
                    $0.done[key] += 1
                    $0.answered += 1
                }
            } catch let error as LifelineError where error.status == .unavailable || error.status == .timeout
            {
                state.withLock {
                    $0.uncertain[key] += 1
                    $0.retryable += 1
                }
                try? await Task.sleep(for: .milliseconds(20))  // a caller's pause before it retries
            } catch {
                state.withLock { $0.other.append("u\(key): \(error)") }
                try? await Task.sleep(for: .milliseconds(20))
            }
        }
    }
}

/// The journal lifeline-cart keeps of its activations (`start|stop USER PID NANOSECONDS`), read for
/// overlaps: an activation lasts from its start to its stop, or to its process's death.
struct ActivationJournal {
    struct Line {
        let start: Bool
        let key: String
        let pid: Int32
        let at: UInt64
    }

    let lines: [Line]
    /// When each killed process was seen dead (monotonic nanoseconds).
    let deaths: [Int32: UInt64]

    init(file: URL, deaths: [Int32: UInt64]) {
        let text = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
        lines = text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count == 4, let pid = Int32(fields[2]), let at = UInt64(fields[3]) else {
                return nil
            }
            return Line(start: fields[0] == "start", key: String(fields[1]), pid: pid, at: at)
        }
        self.deaths = deaths
    }

    var starts: Int { lines.filter(\.start).count }

    /// Each pair of activations of one key that ran at the same time.
    func overlaps() -> [String] {
        var intervals: [String: [(pid: Int32, from: UInt64, to: UInt64)]] = [:]
        var open: [String: (pid: Int32, from: UInt64)] = [:]
        for line in lines.sorted(by: { $0.at < $1.at }) {
            let slot = "\(line.key) \(line.pid)"
            if line.start {
                open[slot] = (line.pid, line.at)
            } else if let started = open.removeValue(forKey: slot) {
                intervals[line.key, default: []].append((line.pid, started.from, line.at))
            }
        }
        for (slot, started) in open {
            let key = String(slot.split(separator: " ")[0])
            intervals[key, default: []].append((started.pid, started.from, deaths[started.pid] ?? .max))
        }
        var found: [String] = []
        for (key, list) in intervals {
            var latest: (pid: Int32, from: UInt64, to: UInt64)?
            for interval in list.sorted(by: { $0.from < $1.from }) {
                if let earlier = latest, interval.from < earlier.to {
                    found.append(
                        "\(key): pid \(earlier.pid) until \(earlier.to), pid \(interval.pid) from \(interval.from)"
                    )
                }
                if latest == nil || interval.to > latest!.to { latest = interval }
            }
        }
        return found
    }
}

@Suite(
    "Two hosts: an instance holding actors by key cut off from the broker", .serialized,
    .timeLimit(.minutes(3)),
    .enabled(if: NetworkHosts.available, "needs root and iproute2 for network namespaces"))
struct KeyedActorPartitionTests {
    @Test(
        "the link to an instance cut: it drops its keys itself before the broker moves them to the other instance; no key active in two places; back, it serves again"
    )
    func cutLink() async throws {
        let hosts = try NetworkHosts()
        defer { hosts.remove() }
        let files = KeyedActorProcessTests.CartFiles()
        defer { files.remove() }
        let control = "tcp://\(hosts.addresses.0):7200"
        let broker = try hosts.process(
            onFirst: true, "lifeline",
            ["broker", "--control", control, "--bus", "tcp://\(hosts.addresses.0):7201", "--insecure"])
        defer { broker.kill() }
        try await broker.waitForLine(startingWith: "READY ")
        /// A cart instance on host A (beside the broker) or B (across the link).
        func cart(onFirst: Bool) async throws -> ChildProcess {
            let child = try ChildProcess(
                NetworkHosts.ip ?? "ip",
                [
                    "netns", "exec", onFirst ? hosts.names.0 : hosts.names.1, "/usr/bin/env",
                    "LIFELINE_CART_STORE=\(files.directory.path)",
                    "LIFELINE_CART_JOURNAL=\(files.journal.path)",
                    Executables.url("lifeline-cart").path, "--broker", control,
                ])
            try await child.waitForLine(startingWith: "READY service=", seconds: 30)
            return child
        }
        let far = try await cart(onFirst: false)
        let near = try await cart(onFirst: true)
        defer { for child in [far, near] { child.kill() } }
        /// `lifeline call` on host A.
        func call(_ key: String, timeout: String = "5s") async throws -> CLIResult {
            let child = try hosts.process(
                onFirst: true, "lifeline",
                [
                    "call", "cart/\(key)", "add", "item=tea", "quantity:=1", "--broker", control, "--timeout",
                    timeout,
                ])
            let status = try await child.waitForExit(seconds: 60)
            await child.waitForOutputToEnd()
            return CLIResult(status: status, stdout: child.lines(.stdout), stderr: child.lines(.stderr))
        }
        let keys = (0..<6).map { "k\($0)" }
        var servedBy: [String: Int64] = [:]
        for key in keys {
            let result = try await call(key)
            #expect(result.status == 0, "\(result.errors)")
            servedBy[key] = try JSONParser.parse(result.output)["servedBy"]?.intValue
        }
        let farPid = Int64(far.pid)
        let farKeys = keys.filter { servedBy[$0] == farPid }
        #expect(!farKeys.isEmpty && farKeys.count < keys.count, "the keys spread over both: \(servedBy)")

        try hosts.setLink(up: false)
        try await far.waitForLine(.stderr, seconds: 20) { $0.contains("deactivating") }
        for key in farKeys {
            // The broker does not know yet: the first call may go to the far instance and fail
            // retryably (503 when its window passes); the key then moves after that call's deadline.
            var moved = try await call(key, timeout: "4s")
            if moved.status != 0 {
                #expect(
                    moved.errors.contains("503 unavailable") || moved.errors.contains("504"),
                    "\(moved.errors)")
                moved = try await call(key, timeout: "20s")
            }
            #expect(moved.status == 0, "\(key): \(moved.errors)")
            #expect(try JSONParser.parse(moved.output)["servedBy"]?.intValue == Int64(near.pid))
            #expect(try JSONParser.parse(moved.output)["items"] == 2, "its state went with it")
        }
        try hosts.setLink(up: true)
        try await far.waitForLine(.stderr, seconds: 30) { $0.contains("registered again") }
        for instance in [far, near] { instance.kill(SIGTERM) }
        for instance in [far, near] { _ = try await instance.waitForExit(seconds: 20) }
        let journal = ActivationJournal(file: files.journal, deaths: [:])
        let overlaps = journal.overlaps()
        print(
            "actors by key, cut link: \(farKeys.count) of \(keys.count) keys on the far instance moved, activations \(journal.starts), overlapping \(overlaps.count)"
        )
        #expect(overlaps.isEmpty, "\(overlaps)")
    }
}

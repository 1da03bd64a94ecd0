import Foundation
import Lifeline
import LifelineProtocol
import LifelineSupport
import Synchronization

/// Keeps a ``ConsoleState`` current from the broker, on threads of its own (each with its own
/// broker sockets): one asks for the views (status, services and their calls, the micro-app stack,
/// the boot) every second while a page is open and every 5 s otherwise; one samples the broker's
/// counts of events published by name (STATS) every second, page or not, for the rates and the
/// chart; one reads the bus while a page's tail or trace view is open, and holds a TRACE lease
/// while a trace view is.
final class ConsoleFeed: Sendable {
    let broker: String
    let credentials: LifelineClient.Credentials?
    let state: ConsoleState
    private let stopped = Atomic<Bool>(false)

    init(broker: String, credentials: LifelineClient.Credentials?, state: ConsoleState) {
        self.broker = broker
        self.credentials = credentials
        self.state = state
    }

    /// Wall-clock milliseconds: bus rates are counted in whole seconds of it.
    static func now() -> Int64 { Int64(SystemClock.wallNanoseconds() / 1_000_000) }

    /// Starts both threads.
    func start() {
        Thread { [self] in
            ThreadName.set("ll-console-poll")
            pollLoop()
        }.start()
        Thread { [self] in
            ThreadName.set("ll-console-bus")
            busLoop()
        }.start()
        Thread { [self] in
            ThreadName.set("ll-console-rate")
            rateLoop()
        }.start()
    }

    // MARK: Rates

    /// Samples the broker's published counts every second, whether or not a page is open, so that
    /// a page opened after a busy period shows it.
    private func rateLoop() {
        var client: BlockingClient?
        var samples = 0
        while !isStopped {
            let started = SystemClock.monotonicNanoseconds()
            do {
                let current = try client ?? BlockingClient(broker: broker, credentials: credentials)
                client = current
                let stats = try current.request(.stats, timeout: .seconds(2)).json()
                var counts: [String: UInt64] = [:]
                for (name, count) in stats["events"]?.objectValue ?? [:] {
                    counts[name] = UInt64(max(0, count.intValue ?? 0))
                }
                let epoch = UInt64(bitPattern: stats["broker"]?["epoch"]?.intValue ?? 0)
                let now = Self.now()
                state.recordCounts(counts, epoch: epoch, now: now)
                state.recordServices(
                    stats["services"]?.objectValue ?? [:],
                    bounds: stats["broker"]?["latencyBoundsMs"]?.arrayValue?.compactMap(\.doubleValue) ?? [],
                    epoch: epoch, now: now)
                samples += 1
                state.update("counting", ["samples": .int(Int64(samples))])
            } catch {
                // The client's socket reconnects by itself; a key that may not observe is told here.
                state.update(
                    "counting", ["samples": .int(Int64(samples)), "error": .string(Self.sentence(error))])
            }
            let spent = Double(SystemClock.monotonicNanoseconds() - started) / 1e9
            Thread.sleep(forTimeInterval: max(0.05, 1 - spent))
        }
    }

    /// Ends both threads within about a second.
    func stop() { stopped.store(true, ordering: .relaxed) }

    private var isStopped: Bool { stopped.load(ordering: .relaxed) }

    // MARK: Views

    private func pollLoop() {
        var services = ServicesView()
        var client: BlockingClient?
        while !isStopped {
            do {
                let current = try client ?? BlockingClient(broker: broker, credentials: credentials)
                client = current
                poll(current, &services)
            } catch {
                state.update("broker", ["error": .string(Self.sentence(error))])
            }
            // A page that opens is served at once; otherwise every second while one is open.
            let pagesBefore = state.viewers.pages
            for _ in 0..<(pagesBefore > 0 ? 10 : 50) {
                if isStopped || state.viewers.pages > pagesBefore { break }
                Thread.sleep(forTimeInterval: 0.1)
            }
        }
    }

    private func poll(_ client: BlockingClient, _ services: inout ServicesView) {
        let timeout = Duration.seconds(2)
        let info: JSONValue
        do {
            info = try client.hello(timeout: timeout).json
        } catch {
            state.update("broker", ["error": .string(Self.sentence(error)), "endpoint": .string(broker)])
            return
        }
        var stats: JSONValue?
        var statsError: String?
        do { stats = try client.request(.stats, timeout: timeout).json() } catch {
            statsError = Self.sentence(error)
        }
        guard case .object(var broker) = info else { return }
        broker["endpoint"] = .string(self.broker)
        // A broker group's leader says where the group stands; a single broker has no `group`.
        if let stats { state.update("group", stats["group"] ?? .null) }
        broker["published"] = stats?["broker"]?["published"] ?? .null
        broker["delivered"] = stats?["broker"]?["delivered"] ?? .null
        state.update("broker", .object(broker))
        do {
            let records = try client.services(timeout: timeout).map(\.json)
            var details: [String: JSONValue] = [:]
            for record in records {
                guard let name = record["name"]?.stringValue else { continue }
                details[name] = ["record": record, "stats": stats?["services"]?[name] ?? .null]
            }
            state.setDetails(details)
            var view: JSONValue = ["services": services.view(records: records, stats: stats, now: Self.now())]
            if let statsError {
                view = ["services": view["services"] ?? .null, "statsError": .string(statsError)]
            }
            state.update("services", view)
        } catch {
            state.update("services", ["error": .string(Self.sentence(error))])
        }
        do {
            let now = Int64(Self.now())
            let placements = try client.request(.actors(service: nil), timeout: timeout).json()["actors"]
            let actors = (placements?.arrayValue ?? []).map { placement -> JSONValue in
                guard case .object(var fields) = placement else { return placement }
                fields["ageMs"] = .int(max(0, now - (fields["sinceMs"]?.intValue ?? now)))
                return .object(fields)
            }
            state.update("actors", ["actors": .array(actors)])
        } catch {
            state.update("actors", ["error": .string(Self.sentence(error))])
        }
        do { state.update("stack", try client.apps(.list, timeout: timeout)) } catch {
            state.update("stack", ["error": .string(Self.sentence(error))])
        }
        do {
            let report = try client.boot(.report, timeout: timeout)
            state.update("boot", ["report": report, "text": .string(BootCommand.text(report))])
        } catch {
            state.update("boot", ["error": .string(Self.sentence(error))])
        }
    }

    // MARK: The bus

    private func busLoop() {
        var client: BlockingClient?
        var subscriber: BusSubscriber?
        var leaseRenewal: UInt64 = 0
        while !isStopped {
            let viewers = state.viewers
            let wanted =
                viewers.tails + viewers.traces > 0 || Self.now() - viewers.lastChangeMilliseconds < 10_000
            guard wanted else {
                if subscriber != nil { state.update("bus", ["subscribed": false]) }
                subscriber = nil
                Thread.sleep(forTimeInterval: 0.2)
                continue
            }
            do {
                let current = try client ?? BlockingClient(broker: broker, credentials: credentials)
                client = current
                if subscriber == nil {
                    subscriber = try current.subscribeWhole(to: nil, timeout: .seconds(2))
                    state.update("bus", ["subscribed": true])
                }
                if viewers.traces == 0 {
                    // The lease lapses by itself; a view that opens again asks for one at once.
                    leaseRenewal = 0
                    state.update("trace", ["leased": false])
                } else if SystemClock.monotonicNanoseconds() >= leaseRenewal {
                    leaseRenewal = SystemClock.monotonicNanoseconds() + 5_000_000_000
                    do {
                        _ = try current.request(.trace(seconds: 10), timeout: .seconds(2))
                        state.update("trace", ["leased": true])
                    } catch {
                        state.update("trace", ["error": .string(Self.sentence(error))])
                    }
                }
                try drain(subscriber)
            } catch {
                state.update("bus", ["error": .string(Self.sentence(error))])
                subscriber = nil
                // A refused subscription stays refused until the policy changes: ask rarely.
                let refused = (error as? LifelineError)?.status == .forbidden
                for _ in 0..<(refused ? 150 : 5) where !isStopped { Thread.sleep(forTimeInterval: 0.2) }
            }
        }
    }

    /// Records what the bus brings in the next 200 ms.
    private func drain(_ subscriber: BusSubscriber?) throws {
        guard let subscriber else { return }
        let until = SystemClock.monotonicNanoseconds() + 200_000_000
        var timeout = Duration.milliseconds(200)
        while true {
            do {
                guard let message = try subscriber.next(timeout: timeout) else { return }
                state.record(
                    sequence: message.header.sequence, name: message.name.rawValue,
                    publishedAt: Int64(message.header.publishedWallNanoseconds / 1_000_000),
                    payload: message.payload, now: Self.now())
            } catch let error as ProtocolError {
                state.update("bus", ["subscribed": true, "skipped": .string(error.message)])
            }
            let now = SystemClock.monotonicNanoseconds()
            guard now < until else { return }
            timeout = .nanoseconds(Int64(until - now))
        }
    }

    /// What to show of `error`: the broker's or the client's sentence.
    static func sentence(_ error: any Error) -> String {
        if let error = error as? LifelineError { return error.message }
        if let error = error as? ProtocolError { return error.message }
        return String(describing: error)
    }
}

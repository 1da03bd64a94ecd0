import LifelineProtocol
import LifelineSupport
import Testing

@testable import LifelineCLI

@Suite("The console's state: views, the tail, rates and services, with an injected clock")
struct ConsoleStateTests {
    @Test("a view is sent again only when it changed")
    func sections() {
        let state = ConsoleState()
        #expect(state.update("stack", ["stack": []]))
        #expect(!state.update("stack", ["stack": []]))
        let first = state.sections(after: 0)
        #expect(first.changed.map(\.0) == ["stack"])
        #expect(state.sections(after: first.version).changed.isEmpty)
        state.update("services", ["services": []])
        #expect(state.sections(after: first.version).changed.map(\.0) == ["services"])
    }

    @Test("the tail gives the newest matching events, counts the rest, and keeps traces apart")
    func tail() {
        let state = ConsoleState()
        for index in 1...120 {
            state.record(
                sequence: UInt64(index), name: index % 2 == 0 ? "com.example.even" : "didBecomeActive",
                publishedAt: 0, payload: Array("{\"i\":\(index)}".utf8), now: 1_000)
        }
        state.record(sequence: 121, name: "dispatchDidStep", publishedAt: 0, payload: [], now: 1_000)
        let even = state.entries(after: 0, traces: false, matching: "com.example.*", limit: 50)
        #expect(even.entries.count == 50)
        #expect(even.skipped == 10)
        #expect(even.entries.last?.payload == "{\"i\":120}")
        #expect(even.last == 121)
        #expect(state.entries(after: 0, traces: false, matching: "Active", limit: 100).entries.count == 60)
        #expect(
            state.entries(after: 0, traces: true, matching: nil, limit: 10).entries.map(\.name) == [
                "dispatchDidStep"
            ])
        #expect(state.entries(after: 121, traces: false, matching: nil, limit: 10).entries.isEmpty)
        let long = [UInt8](repeating: UInt8(ascii: "x"), count: 5_000)
        state.record(sequence: 122, name: "big", publishedAt: 0, payload: long, now: 1_000)
        #expect(
            state.entries(after: 121, traces: false, matching: nil, limit: 1).entries.first?.payload
                .hasSuffix(
                    "… (5000 bytes)") == true)
    }

    @Test(
        "rates come from the broker's counts: what was published since the last sample, per whole second; quiet seconds are listed empty; traces and events before the first sample are not counted"
    )
    func rates() {
        let state = ConsoleState()
        state.recordCounts(["a": 40, "old": 7], epoch: 5, now: 9_000)
        state.recordCounts(["a": 43, "b": 1, "old": 7], epoch: 5, now: 10_100)
        state.record(sequence: 1, name: "a", publishedAt: 0, payload: [], now: 10_500)
        state.recordCounts(["a": 43, "b": 1, "old": 7], epoch: 5, now: 11_100)
        state.recordCounts(["a": 44, "b": 1, "old": 7, "callDidFinish": 9], epoch: 5, now: 12_500)
        let rates = state.rates(after: 9, now: 13_000)
        #expect(rates.map(\.second) == [10, 11, 12])
        #expect(
            rates.map(\.counts) == [["a": 3, "b": 1], [:], ["a": 1]], "bus events seen do not count twice")
        #expect(state.rates(after: 12, now: 13_999).isEmpty)
        // A new epoch (the broker restarted) counts from 0.
        state.recordCounts(["a": 2], epoch: 6, now: 14_200)
        #expect(state.rates(after: 13, now: 15_000).map(\.counts) == [["a": 2]])
    }

    @Test(
        "a service's calls and handled events over time: per second for five minutes, per minute for an hour, from the broker's counters"
    )
    func serviceHistory() throws {
        let state = ConsoleState()
        // Latency buckets up to 1 ms, up to 10 ms, and beyond.
        func sample(
            _ requests: Int64, errors: Int64 = 0, handled: Int64 = 0, buckets: [Int64], epoch: UInt64 = 5,
            at now: Int64
        ) {
            let entry: JSONValue = [
                "methods": [
                    "status": [
                        "requests": .int(requests), "errors": .int(errors),
                        "buckets": .array(buckets.map { .int($0) }),
                    ]
                ],
                "handled": ["didBecomeActive": .int(handled)],
            ]
            state.recordServices(
                ["push": entry, "url": ["methods": ["resolve": ["requests": 9]]]], bounds: [1, 10],
                epoch: epoch,
                now: now)
        }
        sample(10, buckets: [10, 0, 0], at: 1_000)
        sample(13, errors: 1, handled: 2, buckets: [12, 1, 0], at: 2_100)
        sample(13, errors: 1, handled: 2, buckets: [12, 1, 0], at: 3_100)
        sample(14, errors: 1, handled: 2, buckets: [12, 1, 1], at: 61_500)
        // Per second: seconds 2 and 61 hold what grew; the series ends at the second before `now`'s.
        let seconds = state.serviceHistory("push", perMinute: false, now: 62_000)
        #expect(seconds.end == 61)
        let requests = try #require(seconds.values["requests\tstatus"])
        #expect(requests.count == 300 && requests[299] == 1 && requests[299 - 59] == 3)
        #expect(seconds.values["errors\tstatus"]?[299 - 59] == 1)
        #expect(seconds.values["handled\tdidBecomeActive"]?[299 - 59] == 2)
        #expect(seconds.values.keys.allSatisfy { !$0.contains("resolve") }, "only push's counts")
        // p50 and p99 of each second's calls, from the buckets they fell in: second 2 had two calls
        // within 1 ms and one within 10 ms; second 61 one beyond the last bound (shown as it).
        state.setDetails(["push": ["record": ["name": "push"], "stats": .null]])
        let page = try ServicePage.view(name: "push", range: "5m", state: state, now: 62_000)
        let p50 = try #require(page["history"]?["latency"]?["p50\tstatus"]?.arrayValue)
        let p99 = try #require(page["history"]?["latency"]?["p99\tstatus"]?.arrayValue)
        #expect(p50[299 - 59] == .double(1) && p99[299 - 59] == .double(10))
        #expect(p50[299] == .double(10) && p99[299] == .double(10))
        #expect(p50[0] == .null, "no calls: no figure")
        #expect(page["history"]?["series"]?["bucket\tstatus\t0"] == nil, "buckets are not sent as such")
        #expect(throws: HTTPError.self) {
            try ServicePage.view(name: "push", range: "2h", state: state, now: 0)
        }
        #expect(throws: HTTPError.self) {
            try ServicePage.view(name: "nosuch", range: nil, state: state, now: 0)
        }
        // Per minute: minute 0 holds the first three, minute 1 the last; the current minute (2) is
        // the last point, so far.
        let minutes = state.serviceHistory("push", perMinute: true, now: 121_000)
        #expect(minutes.end == 2)
        #expect(minutes.values["requests\tstatus"]?.suffix(3) == [3, 1, 0])
        // A new epoch (the broker restarted) counts from 0; more than five minutes on, the old
        // seconds are gone.
        sample(4, buckets: [4, 0, 0], epoch: 6, at: 400_500)
        let later = state.serviceHistory("push", perMinute: false, now: 401_000)
        #expect(later.values["requests\tstatus"]?.reduce(0, +) == 4)
    }

    @Test("a service history follows at most its bound of names")
    func boundedHistory() {
        var history = CounterHistory()
        var counts: [String: UInt64] = [:]
        for index in 0..<(CounterHistory.names + 10) { counts["n\(index)"] = 0 }
        history.record(counts, epoch: 1, now: 0)
        for key in counts.keys { counts[key] = 1 }
        history.record(counts, epoch: 1, now: 1_000)
        let series = history.series(perMinute: false, now: 2_000) { _ in true }
        #expect(series.values.count == CounterHistory.names)
    }

    @Test(
        "a service that misses heartbeats is silent; one that leaves the registry is gone, then leaves the view"
    )
    func services() {
        var view = ServicesView()
        func record(_ name: String, age: Int64) -> JSONValue {
            [
                "name": .string(name), "pid": 7, "host": "vm", "events": ["didBecomeActive"], "methods": [],
                "heartbeat": ["intervalMs": 1000, "liveness": 3], "lastHeartbeatMsAgo": .int(age),
                "uptimeMs": 5,
            ]
        }
        let stats: JSONValue = [
            "services": ["push": ["methods": ["status": ["requests": 3]], "handled": ["x": 2, "y": 1]]]
        ]
        let first = view.view(
            records: [record("push", age: 100), record("url", age: 2_500)], stats: stats, now: 0)
        #expect(first.arrayValue?.map { $0["state"]?.stringValue } == ["up", "silent"])
        #expect(first.arrayValue?.first?["calls"]?["status"]?["requests"] == 3)
        #expect(first.arrayValue?.first?["handled"] == 3)
        let later = view.view(records: [record("push", age: 100)], stats: stats, now: 1_000)
        #expect(later.arrayValue?.map { $0["state"]?.stringValue } == ["up", "gone"])
        #expect(later.arrayValue?.last?["goneForMs"] == 0)
        let gone = view.view(records: [record("push", age: 100)], stats: stats, now: 31_000)
        #expect(gone.arrayValue?.map { $0["name"]?.stringValue } == ["push"])
        let back = view.view(
            records: [record("push", age: 100), record("url", age: 10)], stats: stats, now: 32_000)
        #expect(back.arrayValue?.map { $0["state"]?.stringValue } == ["up", "up"])
        #expect(back.arrayValue?.first?["instances"] == [["pid": 7, "host": "vm"]], "one process: its own")
        guard case .object(var replicated) = record("rates", age: 10) else { return }
        replicated["instances"] = [
            ["instance": "a", "pid": 7, "host": "vm", "inFlight": 2, "connected": true],
            ["instance": "b", "pid": 8, "host": "vm", "inFlight": 0, "connected": false],
        ]
        let rows = view.view(records: [.object(replicated)], stats: nil, now: 33_000)
        #expect(
            rows.arrayValue?.first { $0["name"] == "rates" }?["instances"] == [
                ["pid": 7, "host": "vm", "inFlight": 2, "connected": true],
                ["pid": 8, "host": "vm", "inFlight": 0, "connected": false],
            ])
    }
}

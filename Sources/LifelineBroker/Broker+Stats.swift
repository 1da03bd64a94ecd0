import LifelineProtocol

extension Broker {
    /// The STATS reply: broker-wide counters, published events by name, and each service's calls
    /// by method (requests, errors, timeouts, latency quantiles as the broker measures them).
    /// Events published in this epoch, by name: the sequencer's topic sequences (bounded by
    /// --max-event-names).
    var eventCounts: [String: UInt64] {
        Dictionary(uniqueKeysWithValues: core.sequencer.topicSequences.map { ($0.key.rawValue, $0.value) })
    }

    package var statsReport: StatsReport {
        let stats = core.stats
        func milliseconds(_ seconds: Double?) -> Double? { seconds.map { $0 * 1000 } }
        func count(_ value: UInt64) -> Int64 { Int64(clamping: value) }
        var services: [StatsReport.Name: StatsReport.Service] = [:]
        let names = Set(core.registry.entries.keys).union(stats.calls.keys).union(stats.dispatchSteps.keys)
        for name in names {
            let entry = core.registry.entry(named: name)
            var record = StatsReport.Service()
            for (method, calls) in stats.calls[name] ?? [:] {
                var figures = StatsReport.Method()
                (figures.requests, figures.errors) = (Int64(calls.requests), Int64(calls.errors))
                figures.timeouts = Int64(calls.timeouts)
                if calls.latency.count != 0 {
                    figures.meanMilliseconds = calls.latency.sumSeconds / Double(calls.latency.count) * 1000
                }
                figures.p50Milliseconds = milliseconds(calls.latency.quantile(0.5))
                figures.p99Milliseconds = milliseconds(calls.latency.quantile(0.99))
                figures.buckets = calls.latency.counts.map { Int64(clamping: $0) }
                record.methods[StatsReport.Name(rawValue: method)] = figures
            }
            record.registered = entry != nil
            record.pid = entry.map { Int64($0.registration.pid) }
            record.dropped = count(entry?.dropped ?? 0)
            record.undecodable = count(entry?.undecodable ?? 0)
            record.failed = count(entry?.failed ?? 0)
            record.queued = count(entry?.queued ?? 0)
            for (event, handled) in entry?.handled ?? [:] {
                record.handled[StatsReport.Name(rawValue: event)] = Int(clamping: handled)
            }
            record.dispatchSteps = Int64(stats.dispatchSteps[name] ?? 0)
            record.shared = shared.figures(of: name, in: core)
            if let entry, entry.registration.replicable {
                record.instances = entry.instances.map { instance in
                    var figures = StatsReport.Instance()
                    (figures.instance, figures.host) = (instance.id, instance.registration.host)
                    figures.pid = Int64(instance.registration.pid)
                    (figures.inFlight, figures.answered) = (
                        Int64(instance.inFlight), count(instance.answered)
                    )
                    (figures.connected, figures.dropped) = (instance.connected, count(instance.dropped))
                    figures.queued = count(instance.queued)
                    return figures
                }
            }
            services[StatsReport.Name(rawValue: name)] = record
        }
        var broker = StatsReport.Broker()
        broker.uptimeMilliseconds = Int64((core.now - core.startedAt).wholeMilliseconds)
        broker.requests = Int64(truncatingIfNeeded: core.requestsHandled)
        (broker.published, broker.delivered) = (Int64(stats.published), Int64(stats.delivered))
        (broker.acknowledgements, broker.dispatches) = (
            Int64(stats.acknowledgements), Int64(stats.dispatches)
        )
        (broker.services, broker.peers) = (Int64(core.registry.count), Int64(core.registry.peers.count))
        broker.journal.events = Int64(core.journal.count)
        broker.journal.bytes = Int64(core.journal.bytes)
        (broker.epoch, broker.sequence) = (core.epoch, Int64(core.sequence))
        broker.curve = core.secure
        broker.latencyBoundsMilliseconds = LatencyHistogram.bounds.map { $0 * 1000 }
        return StatsReport(
            broker: broker, events: core.sequencer.topicSequences.mapValues { Int(clamping: $0) },
            services: services, group: groupStatus?())
    }

    /// The STATS reply as a key sees it: an admin key everything; any other only the events its
    /// `subscribe` rule matches and the methods its `call` rule matches.
    func statsReport(visibleTo grant: AccessPolicy.Grant) -> StatsReport {
        var report = statsReport
        guard !grant.admin else { return report }
        func allowed(_ patterns: [String], _ text: String) -> Bool {
            patterns.contains { AccessPolicy.matches($0, text) }
        }
        report.events = report.events.filter { allowed(grant.subscribe, $0.key.rawValue) }
        for (name, var record) in report.services {
            let keyed = core.registry.entry(named: name.rawValue)?.registration.keyedMethods ?? []
            record.methods = record.methods.filter {
                let method = $0.key.rawValue
                // A keyed method is called as service/key.method: visible to a key that may call it
                // for some key.
                return keyed.contains(method)
                    ? grant.call.contains {
                        Self.mayCallForSomeKey($0, service: name.rawValue, method: method)
                    }
                    : allowed(grant.call, "\(name.rawValue).\(method)")
            }
            record.handled = record.handled.filter { allowed(grant.subscribe, $0.key.rawValue) }
            report.services[name] = record
        }
        return report
    }

    /// Whether the `call` pattern matches `service/K.method` for some key K: tried with the key the
    /// pattern itself names (its `*` standing for any run of characters), or any key when it names
    /// none.
    static func mayCallForSomeKey(_ pattern: String, service: String, method: String) -> Bool {
        var key = "k"
        if let slash = pattern.firstIndex(of: "/") {
            let rest = pattern[pattern.index(after: slash)...]
            let named = rest.lastIndex(of: ".").map { rest[..<$0] } ?? rest
            if !named.isEmpty { key = named.replacingOccurrences(of: "*", with: "k") }
        }
        return AccessPolicy.matches(pattern, "\(service)/\(key).\(method)")
    }
}

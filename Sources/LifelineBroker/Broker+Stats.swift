import LifelineProtocol

extension Broker {
    /// The STATS reply: broker-wide counters, published events by name, and each service's calls
    /// by method (requests, errors, timeouts, latency quantiles as the broker measures them).
    /// Events published in this epoch, by name: the sequencer's topic sequences (bounded by
    /// --max-event-names).
    var eventCounts: [String: UInt64] {
        Dictionary(uniqueKeysWithValues: core.sequencer.topicSequences.map { ($0.key.rawValue, $0.value) })
    }

    package var statsReport: JSONValue {
        let stats = core.stats
        func milliseconds(_ seconds: Double?) -> JSONValue {
            guard let seconds, seconds.isFinite else { return .null }
            return .double(seconds * 1000)
        }
        var services: [String: JSONValue] = [:]
        let names = Set(core.registry.entries.keys).union(stats.calls.keys).union(stats.dispatchSteps.keys)
        for name in names.sorted() {
            let entry = core.registry.entry(named: name)
            var methods: [String: JSONValue] = [:]
            for (method, calls) in stats.calls[name] ?? [:] {
                methods[method] = [
                    "requests": .int(Int64(calls.requests)), "errors": .int(Int64(calls.errors)),
                    "timeouts": .int(Int64(calls.timeouts)),
                    "meanMs": calls.latency.count == 0
                        ? .null : .double(calls.latency.sumSeconds / Double(calls.latency.count) * 1000),
                    "p50Ms": milliseconds(calls.latency.quantile(0.5)),
                    "p99Ms": milliseconds(calls.latency.quantile(0.99)),
                    "buckets": .array(calls.latency.counts.map { .int(Int64(clamping: $0)) }),
                ]
            }
            var record: [String: JSONValue] = [
                "registered": .bool(entry != nil),
                "pid": entry.map { .int(Int64($0.registration.pid)) } ?? .null,
                "dropped": .int(Int64(clamping: entry?.dropped ?? 0)),
                "undecodable": .int(Int64(clamping: entry?.undecodable ?? 0)),
                "queued": .int(Int64(clamping: entry?.queued ?? 0)),
                "handled": .object((entry?.handled ?? [:]).mapValues { .int(Int64(clamping: $0)) }),
                "dispatchSteps": .int(Int64(stats.dispatchSteps[name] ?? 0)),
                "methods": .object(methods),
            ]
            if let figures = shared.figures(of: name, in: core) { record["shared"] = figures }
            if let entry, entry.registration.replicable {
                record["instances"] = .array(
                    entry.instances.map { instance in
                        [
                            "instance": .string(instance.id), "pid": .int(Int64(instance.registration.pid)),
                            "host": .string(instance.registration.host),
                            "inFlight": .int(Int64(instance.inFlight)),
                            "answered": .int(Int64(instance.answered)),
                            "connected": .bool(instance.connected),
                            "dropped": .int(Int64(clamping: instance.dropped)),
                            "queued": .int(Int64(clamping: instance.queued)),
                        ]
                    })
            }
            services[name] = .object(record)
        }
        var report: [String: JSONValue] = [
            "broker": [
                "uptimeMs": .int(Int64((core.now - core.startedAt).wholeMilliseconds)),
                "requests": .int(Int64(truncatingIfNeeded: core.requestsHandled)),
                "published": .int(Int64(stats.published)), "delivered": .int(Int64(stats.delivered)),
                "acks": .int(Int64(stats.acknowledgements)), "dispatches": .int(Int64(stats.dispatches)),
                "services": .int(Int64(core.registry.count)), "peers": .int(Int64(core.registry.peers.count)),
                "journal": [
                    "events": .int(Int64(core.journal.count)), "bytes": .int(Int64(core.journal.bytes)),
                ],
                "epoch": .int(Int64(bitPattern: core.epoch)), "sequence": .int(Int64(core.sequence)),
                "curve": .bool(core.secure),
                "latencyBoundsMs": .array(LatencyHistogram.bounds.map { .double($0 * 1000) }),
            ],
            "events": .object(eventCounts.mapValues { .int(Int64($0)) }),
            "services": .object(services),
        ]
        if let groupStatus { report["group"] = groupStatus() }
        return .object(report)
    }

    /// The STATS reply as a key sees it: an admin key everything; any other only the events its
    /// `subscribe` rule matches and the methods its `call` rule matches.
    func statsReport(visibleTo grant: AccessPolicy.Grant) -> JSONValue {
        let report = statsReport
        guard !grant.admin, case .object(var members) = report else { return report }
        func allowed(_ patterns: [String], _ text: String) -> Bool {
            patterns.contains { AccessPolicy.matches($0, text) }
        }
        if case .object(let events)? = members["events"] {
            members["events"] = .object(events.filter { allowed(grant.subscribe, $0.key) })
        }
        if case .object(let services)? = members["services"] {
            var visible: [String: JSONValue] = [:]
            for (name, record) in services {
                guard case .object(var fields) = record else { continue }
                if case .object(let methods)? = fields["methods"] {
                    fields["methods"] = .object(methods.filter { allowed(grant.call, "\(name).\($0.key)") })
                }
                if case .object(let handled)? = fields["handled"] {
                    fields["handled"] = .object(handled.filter { allowed(grant.subscribe, $0.key) })
                }
                visible[name] = .object(fields)
            }
            members["services"] = .object(visible)
        }
        return .object(members)
    }
}

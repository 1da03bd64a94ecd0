import LifelineProtocol

extension Broker {
    /// The counters of ``statsReport`` in the Prometheus text exposition format (version 0.0.4).
    package func metricsText(handshakesRefused: Int = 0) -> String {
        let stats = core.stats
        var text = ""
        func family(_ name: String, _ type: String, _ help: String) {
            text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
        }
        func sample(_ name: String, _ labels: [(String, String)] = [], _ value: Double) {
            let rendered =
                labels.isEmpty
                ? ""
                : "{" + labels.map { "\($0.0)=\"\(Self.escapeLabel($0.1))\"" }.joined(separator: ",") + "}"
            let number =
                value.isInfinite
                ? "+Inf"
                : (value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value))
            text += "\(name)\(rendered) \(number)\n"
        }
        let counters: [(String, String, UInt64)] = [
            (
                "lifeline_events_published_total", "Events the broker sequenced, journaled and published.",
                stats.published
            ),
            (
                "lifeline_events_delivered_total",
                "Copies of published events handed to the bus, one per subscriber.", stats.delivered
            ),
            (
                "lifeline_acknowledgements_total", "ACKs of acknowledged events received from services.",
                stats.acknowledgements
            ),
            ("lifeline_dispatches_total", "Ordered dispatches (DISPATCH) started.", stats.dispatches),
            ("lifeline_requests_total", "Control requests decoded and let through.", core.requestsHandled),
            (
                "lifeline_handshakes_refused_total", "CURVE handshakes the ZAP handler refused.",
                UInt64(handshakesRefused)
            ),
        ]
        for (name, help, value) in counters {
            family(name, "counter", help)
            sample(name, [], Double(value))
        }
        let gauges: [(String, String, Double)] = [
            ("lifeline_services", "Registered services.", Double(core.registry.count)),
            (
                "lifeline_connections", "Peers with at least one registered service.",
                Double(core.registry.peers.count)
            ),
            ("lifeline_journal_events", "Events held in the journal for replay.", Double(core.journal.count)),
            ("lifeline_journal_bytes", "Bytes of events held in the journal.", Double(core.journal.bytes)),
            (
                "lifeline_uptime_seconds", "Seconds since this broker started.",
                Double((core.now - core.startedAt).wholeMilliseconds) / 1000
            ),
        ]
        for (name, help, value) in gauges {
            family(name, "gauge", help)
            sample(name, [], value)
        }
        family("lifeline_event_published_total", "counter", "Events published in this epoch, by event name.")
        for (event, count) in eventCounts.sorted(by: { $0.key < $1.key }) {
            sample("lifeline_event_published_total", [("event", event)], Double(count))
        }
        family(
            "lifeline_service_dropped_events_total", "counter",
            "Events a service's handler queue dropped, as it reports.")
        for (name, entry) in core.registry.entries.sorted(by: { $0.key < $1.key }) {
            sample("lifeline_service_dropped_events_total", [("service", name)], Double(entry.dropped))
        }
        family(
            "lifeline_service_undecodable_events_total", "counter",
            "Events whose payload a service's typed handler could not decode, as it reports.")
        for (name, entry) in core.registry.entries.sorted(by: { $0.key < $1.key }) {
            sample(
                "lifeline_service_undecodable_events_total", [("service", name)], Double(entry.undecodable))
        }
        family(
            "lifeline_service_failed_events_total", "counter",
            "Events whose handler threw in a service, as it reports (counted as handled too).")
        for (name, entry) in core.registry.entries.sorted(by: { $0.key < $1.key }) {
            sample("lifeline_service_failed_events_total", [("service", name)], Double(entry.failed))
        }
        family(
            "lifeline_service_queue_depth", "gauge", "Events waiting for a service's handlers, as it reports."
        )
        for (name, entry) in core.registry.entries.sorted(by: { $0.key < $1.key }) {
            sample("lifeline_service_queue_depth", [("service", name)], Double(entry.queued))
        }
        family(
            "lifeline_service_events_handled_total", "counter",
            "Events a service's handlers ran, by event, as it reports.")
        for (name, entry) in core.registry.entries.sorted(by: { $0.key < $1.key }) {
            for (event, count) in entry.handled.sorted(by: { $0.key < $1.key }) {
                sample(
                    "lifeline_service_events_handled_total", [("service", name), ("event", event)],
                    Double(count))
            }
        }
        family("lifeline_service_instances", "gauge", "Processes serving each registered name.")
        for (name, entry) in core.registry.entries.sorted(by: { $0.key < $1.key }) {
            sample("lifeline_service_instances", [("service", name)], Double(entry.instances.count))
        }
        let replicated = core.registry.entries.filter { $0.value.registration.replicable }.sorted {
            $0.key < $1.key
        }
        family(
            "lifeline_instance_calls_answered_total", "counter",
            "Calls each instance of a replicable service answered.")
        for (name, entry) in replicated {
            for instance in entry.instances {
                sample(
                    "lifeline_instance_calls_answered_total", [("service", name), ("instance", instance.id)],
                    Double(instance.answered))
            }
        }
        family(
            "lifeline_instance_calls_in_flight", "gauge",
            "Calls forwarded to each instance of a replicable service and not answered yet.")
        for (name, entry) in replicated {
            for instance in entry.instances {
                sample(
                    "lifeline_instance_calls_in_flight", [("service", name), ("instance", instance.id)],
                    Double(instance.inFlight))
            }
        }
        family("lifeline_dispatch_steps_total", "counter", "Dispatch steps a service answered.")
        for (name, count) in stats.dispatchSteps.sorted(by: { $0.key < $1.key }) {
            sample("lifeline_dispatch_steps_total", [("service", name)], Double(count))
        }
        let calls = stats.calls.sorted { $0.key < $1.key }.flatMap { service, methods in
            methods.sorted { $0.key < $1.key }.map { (service, $0.key, $0.value) }
        }
        family("lifeline_call_requests_total", "counter", "Calls forwarded to a service method.")
        for (service, method, entry) in calls {
            sample(
                "lifeline_call_requests_total", [("service", service), ("method", method)],
                Double(entry.requests))
        }
        family("lifeline_call_errors_total", "counter", "Calls answered with a non-2xx status or timed out.")
        for (service, method, entry) in calls {
            sample(
                "lifeline_call_errors_total", [("service", service), ("method", method)], Double(entry.errors)
            )
        }
        family(
            "lifeline_call_duration_seconds", "histogram",
            "Time from forwarding a call to the service's answer, as the broker sees it.")
        for (service, method, entry) in calls {
            var cumulative: UInt64 = 0
            for (index, count) in entry.latency.counts.enumerated() {
                cumulative += count
                let bound =
                    index < LatencyHistogram.bounds.count ? String(LatencyHistogram.bounds[index]) : "+Inf"
                sample(
                    "lifeline_call_duration_seconds_bucket",
                    [("service", service), ("method", method), ("le", bound)],
                    Double(cumulative))
            }
            sample(
                "lifeline_call_duration_seconds_sum", [("service", service), ("method", method)],
                entry.latency.sumSeconds)
            sample(
                "lifeline_call_duration_seconds_count", [("service", service), ("method", method)],
                Double(entry.latency.count))
        }
        return text
    }

    /// A label value as the exposition format writes it: backslash, quote and newline escaped.
    static func escapeLabel(_ value: String) -> String {
        var escaped = ""
        for character in value {
            switch character {
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            case "\n": escaped += "\\n"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}

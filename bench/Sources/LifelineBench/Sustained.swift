import Foundation
import Lifeline
import LifelineProtocol
import LifelineSupport
import ZeroMQ

/// Sustained load: one publisher at a fixed rate — 50 % and 90 % of the maximum measured just before —
/// for several seconds to every service at once, so that throughput and latency are seen together:
/// the rate delivered to each service, latency from the intended send time (sampled events), and
/// events lost.
extension Driver {
    func sustained(_ topology: BenchTopology) throws {
        let fanout = settings.fanouts.max() ?? 1
        let name = EventName(rawValue: "bench.n\(fanout)")
        let topic = Array(name.rawValue.utf8) + [0]
        let seconds = settings.quick ? 3.0 : 10.0
        let client = LifelineClient(broker: topology.brokerControl, credentials: nil)
        defer { AsyncBridge.run { await client.close() } }
        let lifeline = Load(
            system: "lifeline",
            send: { events in
                let published = events.map {
                    PublishedEvent(name, payload: Payload.json(key: $0.key, size: 64, quiet: !$0.sampled))
                }
                _ = try AsyncBridge.run {
                    try await client.publish(
                        contentsOf: published, batchSize: 1000, window: 4, timeout: .seconds(30))
                }
            })
        let proxy = Load(
            system: "zmq_proxy",
            send: { events in
                for event in events {
                    try topology.proxyPub.send(frames: [
                        topic, Payload.json(key: event.key, size: 64, quiet: !event.sampled),
                    ])
                }
            })
        let maximum = try capacity(of: lifeline, fanout: fanout, events: settings.quick ? 20_000 : 50_000)
        progress(
            String(
                format:
                    "sustained %@ N=%d: Lifeline's maximum %.0f events/s to all %d; %.0f s at 50 %% and 90 %%",
                topology.transport, fanout, maximum, fanout, seconds))
        for share in [0.5, 0.9] {
            let rate = maximum * share
            for load in [lifeline, proxy] {
                let outcome = try run(load, rate: rate, seconds: seconds, fanout: fanout)
                progress(
                    String(
                        format: "  %@ at %.0f/s: %.0f/s delivered to each, p99 %.0f µs, %d lost",
                        load.system, rate, outcome.delivered, outcome.summary?.p99 ?? 0, outcome.lost))
                figures.append(
                    Figure(
                        scenario: "sustained", system: load.system, transport: topology.transport,
                        fanout: fanout, size: 64,
                        metric: String(format: "%.0f%% max, %.0f/s", share * 100, rate),
                        mode: String(format: "paced %.0f/s for %.0f s", rate, seconds),
                        summary: outcome.summary,
                        rate: outcome.delivered, lost: outcome.lost))
            }
        }
    }

    /// A way to publish a run of events (key, and whether its subscribers ack it).
    struct Load {
        let system: String
        let send: ([(key: UInt64, sampled: Bool)]) throws -> Void
    }

    /// Events per second that reach all `fanout` services when published as fast as batches go.
    private func capacity(of load: Load, fanout: Int, events: Int) throws -> Double {
        let before = try counts(load, fanout: fanout)
        let first = key + 1
        key += UInt64(events)
        let start = SystemClock.monotonicNanoseconds()
        try load.send((0..<events).map { (first + UInt64($0), false) })
        let after = try counts(load, fanout: fanout)
        let elapsed = Double(SystemClock.monotonicNanoseconds() - start) / 1e9
        let delivered = after.map { index, count in count &- (before[index] ?? 0) }.min() ?? 0
        return Double(delivered) / elapsed
    }

    /// Each subscriber's event count, read from its ack of one probe (which it counts too).
    private func counts(_ load: Load, fanout: Int) throws -> [UInt32: UInt64] {
        let deadline = SystemClock.monotonicNanoseconds() + 30_000_000_000
        while SystemClock.monotonicNanoseconds() < deadline {
            key += 1
            let probe = key
            try load.send([(probe, true)])
            var seen: [UInt32: UInt64] = [:]
            let wait = SystemClock.monotonicNanoseconds() + 5_000_000_000
            while seen.count < fanout, let ack = try receiveAck(until: wait) {
                if ack.key == probe { seen[ack.index] = ack.count }
            }
            if seen.count == fanout { return seen }
        }
        throw BenchError("sustained: \(fanout) subscribers did not all answer a probe within 30 s")
    }

    private func run(_ load: Load, rate: Double, seconds: Double, fanout: Int) throws -> (
        summary: Summary?, delivered: Double, lost: Int
    ) {
        let before = try counts(load, fanout: fanout)
        // About 200 sampled events a second, each acked by every subscriber.
        let stride = max(1, Int(rate / 200))
        let total = Int(rate * seconds)
        let first = key + 1
        key += UInt64(total)
        var intended: [UInt64: UInt64] = [:]
        var latencies: [UInt64] = []
        let start = SystemClock.monotonicNanoseconds() + 2_000_000
        var sent = 0
        func collect() throws {
            while let frames = try ack.receiveFrames(dontWait: true) {
                guard let first = frames.first, let reply = Ack(first), let sentAt = intended[reply.key]
                else {
                    continue
                }
                latencies.append(reply.received &- sentAt)
            }
        }
        while sent < total {
            let now = SystemClock.monotonicNanoseconds()
            let due = now > start ? min(total, Int(Double(now - start) / 1e9 * rate) + 1) : 0
            if due > sent {
                var events: [(key: UInt64, sampled: Bool)] = []
                events.reserveCapacity(due - sent)
                for index in sent..<due {
                    let sampled = index % stride == 0
                    let eventKey = first + UInt64(index)
                    if sampled { intended[eventKey] = start + UInt64(Double(index) / rate * 1e9) }
                    events.append((eventKey, sampled))
                }
                try load.send(events)
                sent = due
            }
            try collect()
            let next = start + UInt64(Double(sent) / rate * 1e9)
            let later = SystemClock.monotonicNanoseconds()
            if next > later + 200_000 { usleep(UInt32(min(1000, (next - later) / 1000))) }
        }
        let after = try counts(load, fanout: fanout)
        let finished = SystemClock.monotonicNanoseconds()
        try collect()
        let delivered = after.map { index, count in Int(count &- (before[index] ?? 0)) - 1 }
        let lost = delivered.reduce(0) { $0 + max(0, total - $1) }
        let elapsed = Double(finished - start) / 1e9
        return (Summary(latencies), Double(delivered.min() ?? 0) / max(seconds, elapsed), lost)
    }
}

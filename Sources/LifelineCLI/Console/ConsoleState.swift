import Foundation
import LifelineBroker
import LifelineProtocol
import Synchronization

/// What the console knows of the running system, shared by its threads: the latest views asked of
/// the broker (each with a version, so a page gets only what changed), the latest bus events, and
/// events per second per name. Times are milliseconds of an injected clock.
final class ConsoleState: Sendable {
    /// One event seen on the bus, as the page shows it.
    struct BusEntry: Sendable, Equatable {
        /// Counts every entry this console has seen, from 1 (bus sequences start again with an epoch).
        var index: UInt64
        var sequence: UInt64
        var name: String
        var publishedAtMilliseconds: Int64
        /// The payload as text, cut to ``ConsoleState/payloadLimit`` bytes.
        var payload: String
        /// A dispatch step or a call (published while a TRACE lease is held).
        var isTrace: Bool

        var json: JSONValue {
            [
                "index": .int(Int64(index)), "sequence": .int(Int64(sequence)), "event": .string(name),
                "publishedAt": .int(publishedAtMilliseconds), "payload": .string(payload),
            ]
        }
    }

    /// How many bus events are kept for the tails.
    static let retained = 2_000
    /// The longest payload shown.
    static let payloadLimit = 1_024
    /// How many seconds of rates are kept for the chart.
    static let rateSeconds = 300

    private struct Inner {
        var sections: [String: (version: UInt64, value: JSONValue)] = [:]
        var version: UInt64 = 0
        var entries: [BusEntry] = []
        var nextIndex: UInt64 = 1
        /// Events per name in each whole second (milliseconds / 1000), oldest first.
        var seconds: [(second: Int64, counts: [String: Int])] = []
        var viewers = 0
        var tailViewers = 0
        var traceViewers = 0
        var lastViewerMilliseconds: Int64 = 0
        /// The broker's published counts by name at the last sample, and its epoch (nil before the
        /// first sample).
        var lastCounts: [String: UInt64] = [:]
        var lastEpoch: UInt64?
        /// Each service's calls (requests, errors) by method and events handled by name, over time.
        var services = CounterHistory()
        /// Events published by name, over time (the bus chart's hour).
        var events = CounterHistory()
        var latencyBounds: [Double] = []
        /// Each service's LIST record and STATS entry, by name, as last asked.
        var details: [String: JSONValue] = [:]
    }

    private let inner = Mutex(Inner())

    // MARK: Views of the broker

    /// Stores view `name`; returns true (and bumps its version) when it differs from the one held.
    @discardableResult
    func update(_ name: String, _ value: JSONValue) -> Bool {
        inner.withLock { inner in
            if inner.sections[name]?.value == value { return false }
            inner.version += 1
            inner.sections[name] = (inner.version, value)
            return true
        }
    }

    /// The view `name`, if asked yet.
    func section(_ name: String) -> JSONValue? { inner.withLock { $0.sections[name]?.value } }

    /// The views changed after `version`, by name, and the version they bring the reader to.
    func sections(after version: UInt64) -> (changed: [(String, JSONValue)], version: UInt64) {
        inner.withLock { inner in
            let changed = inner.sections.filter { $0.value.version > version }.sorted { $0.key < $1.key }
                .map { ($0.key, $0.value.value) }
            return (changed, inner.version)
        }
    }

    // MARK: The bus

    /// Records one bus event seen at `now`.
    func record(sequence: UInt64, name: String, publishedAt: Int64, payload: [UInt8], now: Int64) {
        var text = String(decoding: payload.prefix(Self.payloadLimit), as: UTF8.self)
        if payload.count > Self.payloadLimit { text += "… (\(payload.count) bytes)" }
        let isTrace = name == EventName.dispatchDidStep.rawValue || name == EventName.callDidFinish.rawValue
        inner.withLock { inner in
            inner.entries.append(
                BusEntry(
                    index: inner.nextIndex, sequence: sequence, name: name,
                    publishedAtMilliseconds: publishedAt,
                    payload: text, isTrace: isTrace))
            inner.nextIndex += 1
            if inner.entries.count > Self.retained + Self.retained / 4 {
                inner.entries.removeFirst(inner.entries.count - Self.retained)
            }
        }
    }

    /// Records the broker's own counts of events published by name in `epoch` (STATS), sampled at
    /// `now` whether or not a page is open: what was published since the last sample is counted in
    /// this second. The first sample, and the first of a new epoch, set where counting starts (a new
    /// epoch's counts start from 0). Trace events are not counted.
    func recordCounts(_ counts: [String: UInt64], epoch: UInt64, now: Int64) {
        inner.withLock { inner in
            inner.events.record(
                counts.filter {
                    $0.key != EventName.dispatchDidStep.rawValue && $0.key != EventName.callDidFinish.rawValue
                }, epoch: epoch, now: now)
            defer { (inner.lastCounts, inner.lastEpoch) = (counts, epoch) }
            guard let lastEpoch = inner.lastEpoch else { return }
            var added: [String: Int] = [:]
            for (name, count) in counts
            where name != EventName.dispatchDidStep.rawValue && name != EventName.callDidFinish.rawValue {
                let before = lastEpoch == epoch ? inner.lastCounts[name] ?? 0 : 0
                if count > before { added[name] = Int(clamping: count - before) }
            }
            guard !added.isEmpty else { return }
            let second = now / 1000
            if inner.seconds.last?.second != second {
                inner.seconds.append((second, [:]))
                if inner.seconds.count > Self.rateSeconds + 1 { inner.seconds.removeFirst() }
            }
            inner.seconds[inner.seconds.count - 1].counts.merge(added, uniquingKeysWith: +)
        }
    }

    // MARK: Services over time

    /// Records a sample of the broker's per-service counters (STATS `services`): each method's
    /// requests, errors and latency buckets (whose upper bounds are `bounds`, in milliseconds), each
    /// event's handled count, taken at `now` in broker life `epoch`.
    func recordServices(_ services: [String: JSONValue], bounds: [Double], epoch: UInt64, now: Int64) {
        var counts: [String: UInt64] = [:]
        func add(_ kind: String, _ service: String, _ name: String, _ value: JSONValue?) {
            counts["\(kind)\t\(service)\t\(name)"] = UInt64(max(0, value?.intValue ?? 0))
        }
        for (service, entry) in services {
            for (method, figures) in entry["methods"]?.objectValue ?? [:] {
                add("requests", service, method, figures["requests"])
                add("errors", service, method, figures["errors"])
                for (index, count) in (figures["buckets"]?.arrayValue ?? []).enumerated() {
                    add("bucket", service, "\(method)\t\(index)", count)
                }
            }
            for (event, count) in entry["handled"]?.objectValue ?? [:] {
                add("handled", service, event, count)
            }
        }
        inner.withLock {
            $0.services.record(counts, epoch: epoch, now: now)
            if !bounds.isEmpty { $0.latencyBounds = bounds }
        }
    }

    /// The upper bounds of the broker's latency buckets, in milliseconds (the last bucket has none).
    var latencyBounds: [Double] { inner.withLock { $0.latencyBounds } }

    /// Service `name`'s counts over time (per second over five minutes, or per minute over an hour):
    /// keyed `requests\tMETHOD`, `errors\tMETHOD`, `bucket\tMETHOD\tINDEX` (calls whose time fell in
    /// latency bucket INDEX) and `handled\tEVENT`.
    func serviceHistory(_ name: String, perMinute: Bool, now: Int64) -> (end: Int64, values: [String: [Int]])
    {
        let history = inner.withLock { $0.services }
        let (end, values) = history.series(perMinute: perMinute, now: now) {
            $0.split(separator: "\t", omittingEmptySubsequences: false).dropFirst().first.map(String.init)
                == name
        }
        var byKind: [String: [Int]] = [:]
        for (key, series) in values {
            let parts = key.split(separator: "\t", omittingEmptySubsequences: false)
            byKind["\(parts[0])\t" + parts.dropFirst(2).joined(separator: "\t")] = series
        }
        return (end, byKind)
    }

    /// Events published by name per minute over the last hour, the current minute last.
    func eventHistory(now: Int64) -> (end: Int64, values: [String: [Int]]) {
        inner.withLock { $0.events }.series(perMinute: true, now: now) { _ in true }
    }

    /// Keeps each service's LIST record and STATS entry (`{"record", "stats"}` by name).
    func setDetails(_ details: [String: JSONValue]) { inner.withLock { $0.details = details } }

    /// Service `name`'s LIST record and STATS entry, if it is registered.
    func details(of name: String) -> JSONValue? { inner.withLock { $0.details[name] } }

    /// The entries after `index` that `trace` selects (trace events, or every other event) and
    /// `pattern` matches (nil: all), at most `limit` of the newest: the ones left out are counted in
    /// `skipped`. `last` is the index to read after next time.
    func entries(after index: UInt64, traces: Bool, matching pattern: String?, limit: Int)
        -> (entries: [BusEntry], skipped: Int, last: UInt64)
    {
        inner.withLock { inner in
            let last = inner.nextIndex - 1
            let start = inner.entries.firstIndex { $0.index > index } ?? inner.entries.count
            let wanted = inner.entries[start...].filter { entry in
                entry.isTrace == traces && (pattern.map { Self.matches($0, entry.name) } ?? true)
            }
            return (Array(wanted.suffix(limit)), max(0, wanted.count - limit), last)
        }
    }

    /// True when `filter` selects `name`: a pattern with `*`, or else a part of the name.
    static func matches(_ filter: String, _ name: String) -> Bool {
        let filter = filter.trimmingCharacters(in: .whitespaces)
        if filter.isEmpty { return true }
        return filter.contains("*") ? AccessPolicy.matches(filter, name) : name.contains(filter)
    }

    /// Events per name in each whole second after `second` and before the current one (`now`), at most
    /// the last ``rateSeconds``; seconds with no events are listed empty.
    func rates(after second: Int64, now: Int64) -> [(second: Int64, counts: [String: Int])] {
        let current = now / 1000
        let first = max(second + 1, current - Int64(Self.rateSeconds))
        guard first < current else { return [] }
        let held = inner.withLock { inner in
            inner.seconds.filter { $0.second >= first && $0.second < current }
        }
        let bySecond = Dictionary(held.map { ($0.second, $0.counts) }) { $1 }
        return (first..<current).map { ($0, bySecond[$0] ?? [:]) }
    }

    // MARK: Viewers

    /// Which of a page's streams: its views, its tail (the bus), or its trace view.
    enum Viewer: Sendable { case page, tail, trace }

    /// A page's stream of `kind` opened: the feed asks for the views while a page is open, reads
    /// the bus while a tail or trace view is.
    func viewerJoined(_ kind: Viewer, now: Int64) { count(kind, by: 1, now: now) }

    /// A page's stream of `kind` closed.
    func viewerLeft(_ kind: Viewer, now: Int64) { count(kind, by: -1, now: now) }

    private func count(_ kind: Viewer, by change: Int, now: Int64) {
        inner.withLock {
            switch kind {
            case .page: $0.viewers += change
            case .tail: $0.tailViewers += change
            case .trace: $0.traceViewers += change
            }
            $0.lastViewerMilliseconds = now
        }
    }

    /// How many page streams, tails and trace views are open, and when one last opened or closed.
    var viewers: (pages: Int, tails: Int, traces: Int, lastChangeMilliseconds: Int64) {
        inner.withLock { ($0.viewers, $0.tailViewers, $0.traceViewers, $0.lastViewerMilliseconds) }
    }
}

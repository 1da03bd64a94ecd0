import Foundation
import Glibc
import LifelineProtocol
import LifelineSupport

/// One Server-Sent Events stream to a page, on its connection's thread. Updates are coalesced: the
/// views that changed go out at most every 250 ms, the bus tail at most 50 events per 250 ms (the
/// rest counted as skipped), rates once a second; a comment every 15 s keeps proxies from closing it.
struct ConsoleStream {
    enum Kind {
        /// The views (broker, services, stack, boot, bus and trace status) and the bus rates.
        case views
        /// The latest bus events whose names `filter` selects (a pattern with `*`, or a part of the name).
        case tail(filter: String?)
        /// Dispatch steps and calls, while a TRACE lease is held for this stream.
        case trace
    }

    static let tick = 0.25
    static let tailLimit = 50

    let client: Int32
    let state: ConsoleState
    let kind: Kind

    /// Writes the stream's head, then (unless `headOnly`, a HEAD) its events until the peer leaves.
    func run(headOnly: Bool = false) {
        // A reader that stops reading must not hold its thread and its place among the listener's
        // connections: a write that waits 30 s ends the stream.
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let head =
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
            + ConsoleServer.safety.map { "\($0.name): \($0.value)\r\n" }.joined()
            + "Connection: close\r\n\r\n"
        guard HTTPResponse.write(Array(head.utf8), to: client), !headOnly else { return }
        let viewer: ConsoleState.Viewer =
            switch kind {
            case .views: .page
            case .tail: .tail
            case .trace: .trace
            }
        let isTrace = viewer == .trace
        state.viewerJoined(viewer, now: ConsoleFeed.now())
        defer { state.viewerLeft(viewer, now: ConsoleFeed.now()) }
        var version: UInt64 = 0
        var index: UInt64 = 0
        var second = ConsoleFeed.now() / 1000 - Int64(ConsoleState.rateSeconds) - 1
        var lastWrite = SystemClock.monotonicNanoseconds()
        // The first read shows the newest events held, without counting the older ones as skipped.
        var first = true
        while !peerClosed() {
            var events: [(String, JSONValue)] = []
            switch kind {
            case .views:
                let changed = state.sections(after: version)
                version = changed.version
                events += changed.changed
                let rates = state.rates(after: second, now: ConsoleFeed.now())
                if let last = rates.last {
                    second = last.second
                    events.append(
                        (
                            "rates",
                            .array(
                                rates.map { entry in
                                    [
                                        "second": .int(entry.second),
                                        "counts": .object(entry.counts.mapValues { .int(Int64($0)) }),
                                    ]
                                })
                        ))
                }
            case .tail, .trace:
                let filter: String? = if case .tail(let given) = kind { given } else { nil }
                let read = state.entries(
                    after: index, traces: isTrace, matching: filter, limit: Self.tailLimit)
                index = read.last
                let skipped = first ? 0 : read.skipped
                first = false
                if !read.entries.isEmpty || skipped > 0 {
                    events.append(
                        (
                            isTrace ? "trace" : "tail",
                            ["events": .array(read.entries.map(\.json)), "skipped": .int(Int64(skipped))]
                        ))
                }
            }
            var text = ""
            for (name, value) in events {
                text +=
                    "event: \(name)\ndata: \(String(decoding: JSONWriter.encode(value), as: UTF8.self))\n\n"
            }
            let now = SystemClock.monotonicNanoseconds()
            if text.isEmpty && now - lastWrite > 15_000_000_000 { text = ": still here\n\n" }
            if !text.isEmpty {
                guard HTTPResponse.write(Array(text.utf8), to: client) else { return }
                lastWrite = now
            }
            Thread.sleep(forTimeInterval: Self.tick)
        }
    }

    /// True when the page has gone (it sends nothing on a stream, so readable means closed).
    private func peerClosed() -> Bool {
        var descriptor = pollfd(fd: client, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, 0) > 0 else { return false }
        var byte: UInt8 = 0
        return recv(client, &byte, 1, Int32(MSG_DONTWAIT)) <= 0
    }
}

import LifelineProtocol

extension PublishedEvent {
    /// An event named `name` with `payload` (a JSON object).
    public init(_ name: EventName, _ payload: JSONValue) {
        self.init(name, payload: JSONWriter.encode(payload))
    }
}

extension IteratorProtocol where Element == PublishedEvent {
    /// Up to `size` more events (fewer at the end, none when there are no more).
    @inlinable
    package mutating func nextBatch(of size: Int) -> [PublishedEvent] {
        var batch: [PublishedEvent] = []
        batch.reserveCapacity(size)
        while batch.count < size, let event = next() { batch.append(event) }
        return batch
    }
}

extension LifelineClient {
    /// Publishes `events` in order, the way a busy publisher should: `batchSize` events to a PUBLISH
    /// (each batch gets consecutive sequences and one answer), with up to `window` batches sent and
    /// not yet answered, so the socket never waits for a round trip. Returns one receipt per batch, in
    /// order.
    ///
    /// Each batch carries an id of this client's: a batch the broker did not answer (it restarted, the
    /// network is down) is sent again with the same id, and the rest one batch at a time in order,
    /// until `timeout` passes; the broker publishes each batch once. A refused batch
    /// (a bad event: the broker names it) throws; the batches before it are published, the ones after
    /// it may be.
    /// - Throws: ``LifelineError`` for the first refused batch (the broker names the bad event), or
    ///   `.unavailable` / `.timeout` when the broker does not answer a batch.
    @inlinable @discardableResult
    public func publish(
        contentsOf events: some Sequence<PublishedEvent>, batchSize: Int = 1000, window: Int = 4,
        timeout: Duration = .seconds(10)
    ) async throws -> [PublishReceipt] {
        var source = events.makeIterator()
        return try await publishBatches(batchSize: batchSize, window: window, timeout: timeout) {
            source.nextBatch(of: $0)
        }
    }

    /// ``publish(contentsOf:batchSize:window:timeout:)`` over batches that `next` cuts (empty: no more).
    @usableFromInline
    func publishBatches(
        batchSize: Int, window: Int, timeout: Duration, next: (Int) -> [PublishedEvent]
    ) async throws -> [PublishReceipt] {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        await publishing.settle()
        let size = min(max(1, batchSize), PublishRequest.maximumBatch)
        func nextBatch() -> PublishRequest? {
            let current = next(size)
            return current.isEmpty ? nil : batch(current)
        }
        var receipts: [Int: PublishReceipt] = [:]
        var unanswered: [Int: PublishRequest] = [:]
        var refusal: (any Error)?
        var count = 0
        // Each batch is handed to the connection here, in order, so that the broker receives them
        // in order; the answers come back through one stream.
        let (answers, sink) = AsyncStream<(Int, PublishRequest, Result<ControlReply, LifelineError>)>
            .makeStream()
        var inFlight = 0
        func launch() -> Bool {
            guard let publication = nextBatch() else { return false }
            let index = count
            count += 1
            inFlight += 1
            send(.publish(publication), timeout: min(deadline - clock.now, publishing.attempt)) { result in
                sink.yield((index, publication, result))
            }
            return true
        }
        var stopped = false
        for _ in 0..<max(1, window) where !launch() { break }
        if inFlight > 0 {
            for await (index, publication, result) in answers {
                inFlight -= 1
                switch result {
                case .success(let reply) where reply.status.isSuccess:
                    do { receipts[index] = try PublishReceipt(body: reply.body) } catch {
                        stopped = true
                        if refusal == nil { refusal = error }
                    }
                case .success(let reply):
                    stopped = true
                    if refusal == nil { refusal = LifelineError(reply: reply) }
                case .failure(let error) where error.isWorthRetrying:
                    unanswered[index] = publication
                    stopped = true
                case .failure(let error):
                    stopped = true
                    if refusal == nil { refusal = error }
                }
                if !stopped { _ = launch() }
                if inFlight == 0 { break }
            }
        }
        sink.finish()
        try Task.checkCancellation()
        if let refusal { throw refusal }
        // The rest, one batch at a time and in order: the unanswered ones again, then those not sent.
        for (index, publication) in unanswered.sorted(by: { $0.key < $1.key }) {
            receipts[index] = try await publishUntilAnswered(publication, until: deadline)
        }
        while let publication = nextBatch() {
            receipts[count] = try await publishUntilAnswered(publication, until: deadline)
            count += 1
        }
        return (0..<count).compactMap { receipts[$0] }
    }

    private func batch(_ events: [PublishedEvent]) -> PublishRequest {
        PublishRequest(batch: events, publishID: publishing.nextID())
    }

    /// Sends `publication` until it is answered or `deadline` passes, by the coalescer's one retry
    /// rule (``PublishCoalescer/publish(_:deadline:wholeTime:)``): attempts of the coalescer's
    /// length (all the time left with `wholeTime`), sent again with their id (the broker publishes
    /// it once) after ``PublishCoalescer/retryPause``.
    func publishUntilAnswered(
        _ publication: PublishRequest, until deadline: ContinuousClock.Instant, wholeTime: Bool = false
    ) async throws -> PublishReceipt {
        let left = max(.zero, deadline - ContinuousClock.now)
        return try await publishing.publish(
            publication, deadline: PublishCoalescer.deadline(after: left), wholeTime: wholeTime)
    }
}

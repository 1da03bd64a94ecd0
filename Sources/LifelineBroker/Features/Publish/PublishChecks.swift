import LifelineProtocol

/// What a PUBLISH must pass before any of its events is published — one event or a batch alike: each
/// event's name and payload, the lifecycle transitions in order, acknowledgements only for a single
/// event, and room for the names the broker has not seen yet.
enum PublishChecks {
    /// The status and sentence refusing the PUBLISH, or nil when every event may be published.
    static func problem(of request: PublishRequest, in core: BrokerCore) -> (
        Status, String
    )? {
        let count = request.count
        if count > 1, request.acknowledged == true {
            return (
                .badRequest,
                "a PUBLISH of \(count) events is not acknowledged: publish acknowledged events one at a time"
            )
        }
        var lifecycle = core.lifecycle
        var unseen: Set<EventName> = []
        var previous: EventName?
        var previousIsPlain = false
        for index in 0..<count {
            let event = request.event(at: index)
            func which(_ sentence: String) -> String {
                count == 1 ? sentence : "event \(index + 1) of \(count) (\(event.name)): \(sentence)"
            }
            // The same bytes: a name only canonically equal to the last (a Kelvin sign for `K`) is
            // checked on its own, and refused.
            let repeated = previous.map { event.name.isIdentical(to: $0) } ?? false
            if let problem = EventChecks.publicationProblem(
                event.name, payload: event.payload, nameChecked: repeated)
            {
                return (problem.status, which(problem.message))
            }
            // A name seen just before passed the checks below, and has no lifecycle transition.
            if index > 0 && repeated && previousIsPlain { continue }
            previous = event.name
            previousIsPlain = LifecycleState.target(of: event.name) == nil
            if count > 1, request.acknowledged == nil,
                EventCatalog.descriptor(for: event.name)?.requiresAcknowledgement == true
            {
                return (
                    .badRequest,
                    "event \(index + 1) of \(count) (\(event.name)) is acknowledged: publish it on its own, or the batch with \"ack\": false"
                )
            }
            switch lifecycle.applying(event.name) {
            case .success(let next): if let next { lifecycle = next }
            case .failure(let error):
                guard request.force else { return (.conflict, which(error.description)) }
                if let next = LifecycleState.target(of: event.name) { lifecycle = next }
            }
            if core.journal.topics[event.name] == nil { unseen.insert(event.name) }
        }
        let limit = core.configuration.maximumEventNames
        if !unseen.isEmpty, core.journal.topics.count + unseen.count > limit {
            if count == 1 {
                return (
                    .tooMany,
                    "the broker already keeps \(limit) event names, its limit (--max-event-names): \(request.event) would be one more"
                )
            }
            return (
                .tooMany,
                "the broker already keeps \(core.journal.topics.count) event names and may keep \(limit) (--max-event-names): this batch has \(unseen.count) new ones"
            )
        }
        return nil
    }

    /// How many registered services subscribe to at least one of the PUBLISH's events.
    static func subscribers(of request: PublishRequest, in core: BrokerCore) -> Int {
        guard request.isMixed else { return core.registry.subscriberCount(of: request.event) }
        let names = Set(request.rest.map(\.name) + [request.event])
        return core.registry.entries.values.filter { !names.isDisjoint(with: $0.registration.events) }.count
    }

    /// A batch of several names: how many registered services subscribe to each; nil for one name.
    static func subscribersByEvent(of request: PublishRequest, in core: BrokerCore) -> [String: Int]? {
        guard request.isMixed else { return nil }
        var counts: [String: Int] = [:]
        for event in request.events where counts[event.name.rawValue] == nil {
            counts[event.name.rawValue] = core.registry.subscriberCount(of: event.name)
        }
        return counts
    }
}

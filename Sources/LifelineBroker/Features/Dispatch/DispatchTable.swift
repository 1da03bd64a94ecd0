import LifelineProtocol

/// Dispatches in progress and the offers (steps) they wait on.
struct DispatchTable {
    struct Step {
        var service: String
        var timeoutMilliseconds: Int
    }

    struct Phase {
        var event: EventName
        var mode: DispatchMode
        var steps: [Step]
    }

    struct Offer {
        var dispatch: UInt64
        var phase: Int
        var step: Int
        var service: String
        var startedAt: MonotonicInstant
        var timeoutMilliseconds: Int
    }

    /// How a step ended, as the trace shows it.
    enum StepStatus: String { case answered, timeout, gone, error }

    struct Dispatch {
        let id: UInt64
        let client: [UInt8]
        let requestID: [UInt8]
        let event: EventName
        let descriptor: EventDescriptor?
        var phases: [Phase]
        var phase = 0
        var nextStep = 0
        var payload: JSONValue
        var trace: [DispatchOutcome.Step] = []
        var decided: (service: String, result: CallbackResult)?
        /// Completions by step, combined in dispatch order whatever order the answers came in.
        var completions: [Int: JSONValue?] = [:]
        var failures = 0
        var endedEarly = false
        /// Offer keys not answered yet.
        var outstanding: Set<UInt64> = []
        let startedAt: MonotonicInstant
    }

    private(set) var dispatches: [UInt64: Dispatch] = [:]
    private(set) var offers: [UInt64: Offer] = [:]
    private var dispatchCounter: UInt64 = 0
    private var offerCounter: UInt64 = 0

    mutating func newID() -> UInt64 {
        dispatchCounter += 1
        return dispatchCounter
    }

    subscript(id: UInt64) -> Dispatch? {
        get { dispatches[id] }
        set { dispatches[id] = newValue }
    }

    /// Files `offer`; returns its key.
    mutating func addOffer(_ offer: Offer) -> UInt64 {
        offerCounter += 1
        offers[offerCounter] = offer
        dispatches[offer.dispatch]?.outstanding.insert(offerCounter)
        return offerCounter
    }

    mutating func removeOffer(_ key: UInt64) -> Offer? {
        guard let offer = offers.removeValue(forKey: key) else { return nil }
        dispatches[offer.dispatch]?.outstanding.remove(key)
        return offer
    }

    /// The keys of the offers to `service`, oldest first.
    func offers(to service: String) -> [UInt64] {
        offers.filter { $0.value.service == service }.map(\.key).sorted()
    }
}

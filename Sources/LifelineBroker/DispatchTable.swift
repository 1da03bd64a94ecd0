import LifelineProtocol

/// Dispatches in progress and the offers (steps) they wait on.
struct DispatchTable {
    /// How a phase offers its event.
    enum Mode: String {
        /// One service after another; the first answer other than `continue` ends the phase.
        case chain
        /// One service after another; every service is offered the event whatever the answers.
        case notify
        /// Every service at once (events with a completion); all answers are combined.
        case concurrent
    }

    struct Step {
        var service: String
        var timeoutMilliseconds: Int
    }

    struct Phase {
        var event: EventName
        var mode: Mode
        var steps: [Step]
    }

    struct Offer {
        var dispatch: UInt64
        var phase: Int
        var step: Int
        var service: String
        var peer: [UInt8]
        var startedAt: UInt64
        var deadline: UInt64
    }

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
        var trace: [JSONValue] = []
        var decided: (service: String, result: CallbackResult)?
        /// Completions by step, combined in dispatch order whatever order the answers came in.
        var completions: [Int: JSONValue?] = [:]
        var failures = 0
        var endedEarly = false
        var outstanding: Set<[UInt8]> = []
        let startedAt: UInt64
    }

    private(set) var dispatches: [UInt64: Dispatch] = [:]
    private(set) var offers: [[UInt8]: Offer] = [:]
    private var counter: UInt64 = 0

    mutating func newID() -> UInt64 {
        counter += 1
        return counter
    }

    func isOffer(_ requestID: [UInt8]) -> Bool {
        requestID.first == UInt8(ascii: "o") && offers[requestID] != nil
    }

    subscript(id: UInt64) -> Dispatch? {
        get { dispatches[id] }
        set { dispatches[id] = newValue }
    }

    mutating func addOffer(_ offer: Offer) -> [UInt8] {
        let id = Array("o\(offer.dispatch).\(offer.phase).\(offer.step)".utf8)
        offers[id] = offer
        dispatches[offer.dispatch]?.outstanding.insert(id)
        return id
    }

    mutating func removeOffer(_ id: [UInt8]) -> Offer? {
        guard let offer = offers.removeValue(forKey: id) else { return nil }
        dispatches[offer.dispatch]?.outstanding.remove(id)
        return offer
    }

    func offers(where predicate: (Offer) -> Bool) -> [[UInt8]] {
        offers.filter { predicate($0.value) }.sorted { $0.value.deadline < $1.value.deadline }.map(\.key)
    }

    var nextDeadline: UInt64? { offers.values.lazy.map(\.deadline).min() }
}

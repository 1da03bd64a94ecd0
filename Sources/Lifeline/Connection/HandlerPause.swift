import LifelineProtocol

/// What a connection remembers while a service's handlers are full (``BrokerConnection``'s flow
/// control for a service that resumes from a cursor): which names' events were refused or not
/// delivered, and from where the journal must send them again once the handlers have room.
struct HandlerPause {
    /// The handlers refused an event: nothing is delivered until they have room.
    private(set) var isOn = false
    /// The names whose events were refused or not delivered while paused.
    private(set) var names: Set<EventName> = []
    /// Just before the first event refused or not delivered while paused.
    private(set) var after: UInt64?
    /// The handlers said they have room while the connection was not serving: the refused events
    /// are asked for once it is registered again (it stays paused until then).
    var roomWhenReady = false

    /// The event of `name` at `sequence` was refused by the handlers (pausing) or not delivered
    /// because they are full.
    mutating func missed(_ name: EventName, sequence: UInt64, refused: Bool = false) {
        if refused { isOn = true }
        names.insert(name)
        after = min(after ?? .max, sequence &- 1)
    }

    /// Whether events of `name` wait to be asked again.
    func holds(_ name: EventName) -> Bool { isOn && names.contains(name) }

    /// The positions of another broker life mean nothing: what was missed is forgotten (the pause
    /// itself stays until the handlers have room).
    mutating func forgetPositions() {
        names.removeAll()
        after = nil
    }

    /// Ends the pause.
    /// - Returns: the names to ask the journal for, in order, and the sequence to ask after (`nil`
    ///   when the pause kept no position); nil when nothing was missed.
    mutating func end() -> (names: [EventName], after: UInt64?)? {
        isOn = false
        roomWhenReady = false
        let missed = names.sorted { $0.rawValue < $1.rawValue }
        let position = after
        forgetPositions()
        return missed.isEmpty ? nil : (missed, position)
    }
}

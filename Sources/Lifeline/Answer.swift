import LifelineProtocol

extension Answer {
    /// Not decided here; the next service gets the event.
    public static let `continue` = Answer(.continue)
    /// Fully handled; the chain stops.
    public static let `return` = Answer(.return)
    /// Return YES to the system now.
    public static let returnYES = Answer(.returnYES)
    /// Return NO to the system now.
    public static let returnNO = Answer(.returnNO)

    /// Continue with a rewritten payload (openURL's newURL) that the next services see.
    public static func `continue`(rewriting payload: JSONValue) -> Answer {
        Answer(.continue, payload: payload)
    }

    /// Continue, contributing `completion` to the event's combined completion.
    public static func completed(_ completion: JSONValue) -> Answer {
        Answer(.continue, completion: completion)
    }
}

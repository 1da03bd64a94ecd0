import LifelineProtocol

/// A handler's answer to a dispatched event: its callback result (mPaaS's Continue / Return /
/// ReturnYES / ReturnNO), optionally a rewritten payload for the services after it, and its completion
/// for events that carry one (performFetch: "newData", "noData" or "failed"; shortcut items: a Bool;
/// WatchKit requests: a reply object). It is the OFFER reply of the wire protocol.
public typealias Answer = OfferAnswer

extension OfferAnswer {
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

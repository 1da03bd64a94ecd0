// A service author's vocabulary from the wire module — `EventName`, `JSONValue`, `Status`,
// `Answer`, `PublishReceipt`, `ServiceRecord`, … — comes with `import Lifeline`. Those are the only
// public types of LifelineProtocol: its frames, requests, replies and parsers are `package`, for the
// broker, the CLI and the tests, and no product of this package lets a user import it.
@_exported import LifelineProtocol

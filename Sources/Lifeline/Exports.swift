import LifelineProtocol

// A service author's vocabulary, from the wire module: `import Lifeline` gives these names and
// nothing of the codec (frames, requests, replies, parsers), which stays in LifelineProtocol.

/// A lifecycle event's name: a built-in one (`.openURL`) or a custom one with a namespace
/// (`"com.example.cart.didChange"`).
public typealias EventName = LifelineProtocol.EventName
/// A JSON value: event payloads, call bodies and answers.
public typealias JSONValue = LifelineProtocol.JSONValue
/// A reply status (HTTP-like: 200, 404, 503, …).
public typealias Status = LifelineProtocol.Status
/// Where a service's handled events stand: epoch and sequence, to resume from.
public typealias EventCursor = LifelineProtocol.EventCursor
/// Events lost for good (the journal no longer held them, or the broker restarted).
public typealias GapNotice = LifelineProtocol.GapNotice
/// How a micro-app session is started (push or present, animated or not).
public typealias LaunchMode = LifelineProtocol.LaunchMode
/// The application's lifecycle state as the broker tracks it.
public typealias LifecycleState = LifelineProtocol.LifecycleState
/// A micro-app session on the Context's stack.
public typealias SessionRecord = LifelineProtocol.SessionRecord
/// A session's state: running, paused, launching, detached.
public typealias SessionState = LifelineProtocol.SessionState
/// A registered service as LOOKUP and LIST describe it.
public typealias ServiceRecord = LifelineProtocol.ServiceRecord
/// What a service registered: its name, events, methods, heartbeat.
public typealias ServiceRegistration = LifelineProtocol.ServiceRegistration
/// What `lifeline describe` shows of a service.
public typealias ServiceDescription = LifelineProtocol.ServiceDescription
/// The broker's receipt for a publication: sequence, subscribers, acknowledgements.
public typealias PublishReceipt = LifelineProtocol.PublishReceipt
/// One event of a batch to publish.
public typealias PublishedEvent = LifelineProtocol.PublishedEvent
/// An interceptor's decision on a start request: allow, change, refuse.
public typealias StartDecision = LifelineProtocol.StartDecision
/// When a boot task runs: a launch option, an environment variable, or the service's own check.
public typealias BootCondition = LifelineProtocol.BootCondition
/// A micro-app session's lifecycle callbacks.
public typealias AppCallbackName = LifelineProtocol.AppCallbackName
/// What a dispatched event's handler decides: continue, return, returnYES, returnNO.
public typealias CallbackResult = LifelineProtocol.CallbackResult
/// An operation on the Context's micro-app stack (``LifelineClient/apps(_:timeout:)``).
public typealias AppsRequest = LifelineProtocol.AppsRequest
/// A session start, for ``AppsRequest``.
public typealias AppStart = LifelineProtocol.AppStart
/// A session exit, for ``AppsRequest``.
public typealias AppExit = LifelineProtocol.AppExit
/// Which session an operation means: the top one, one by id, the newest of an app.
public typealias SessionTarget = LifelineProtocol.SessionTarget
/// What HELLO tells: where the bus is, the epoch, the heartbeat rules.
public typealias BrokerInfo = LifelineProtocol.BrokerInfo
/// A dispatch's verdict and completion (``LifelineClient/dispatch(_:_:force:stepTimeout:)``).
public typealias DispatchOutcome = LifelineProtocol.DispatchOutcome
/// How often a service heartbeats and how many beats it may miss.
public typealias HeartbeatSettings = LifelineProtocol.HeartbeatSettings
/// Why an event name or payload is refused.
public typealias EventValidationError = LifelineProtocol.EventValidationError
/// A payload, call body or answer that does not decode as the type asked for (which type, where, why).
public typealias PayloadDecodingError = LifelineProtocol.PayloadDecodingError

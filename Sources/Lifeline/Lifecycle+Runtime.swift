import LifelineProtocol

/// The events the broker publishes about the runtime itself: services, dispatches, calls, micro-apps, the boot.
extension Lifecycle {
    /// Published by the broker: a service registered with the broker
    public struct ServiceDidStart: LifelineEvent, Equatable {
        public static let name = EventName.serviceDidStart
        /// The service.
        public var name: String
        /// Its process id.
        public var pid: Int
        /// Its host.
        public var host: String

        public init(name: String, pid: Int, host: String) {
            self.name = name
            self.pid = pid
            self.host = host
        }
    }

    /// Published by the broker: a service unregistered or stopped answering
    public struct ServiceDidStop: LifelineEvent, Equatable {
        public static let name = EventName.serviceDidStop
        /// The service.
        public var name: String
        /// Unregistered or expired.
        public var reason: String

        public init(name: String, reason: String) {
            self.name = name
            self.reason = reason
        }
    }

    /// Published by the broker: an instance of a replicable service registered
    public struct ServiceInstanceDidJoin: LifelineEvent, Equatable {
        public static let name = EventName.serviceInstanceDidJoin
        /// The service.
        public var name: String
        /// The instance's id.
        public var instance: String
        /// Its process id.
        public var pid: Int
        /// Its host.
        public var host: String
        /// How many instances the service has now.
        public var instances: Int

        public init(name: String, instance: String, pid: Int, host: String, instances: Int) {
            self.name = name
            self.instance = instance
            self.pid = pid
            self.host = host
            self.instances = instances
        }
    }

    /// Published by the broker: an instance of a replicable service unregistered or stopped answering
    public struct ServiceInstanceDidLeave: LifelineEvent, Equatable {
        public static let name = EventName.serviceInstanceDidLeave
        /// The service.
        public var name: String
        /// The instance's id.
        public var instance: String
        /// Its process id.
        public var pid: Int
        /// Its host.
        public var host: String
        /// Unregistered, expired or revoked.
        public var reason: String
        /// How many instances the service has now.
        public var instances: Int

        public init(name: String, instance: String, pid: Int, host: String, reason: String, instances: Int) {
            self.name = name
            self.instance = instance
            self.pid = pid
            self.host = host
            self.reason = reason
            self.instances = instances
        }
    }

    /// Published by the broker: a dispatched event finished its chain
    public struct DispatchDidComplete: LifelineEvent, Equatable {
        public static let name = EventName.dispatchDidComplete
        /// The dispatched event.
        public var event: String
        /// The dispatch's id.
        public var dispatch: Int
        /// Continue, return, returnYES or returnNO.
        public var result: String
        /// The service whose answer ended the chain, or null.
        public var decidedBy: JSONValue

        public init(event: String, dispatch: Int, result: String, decidedBy: JSONValue) {
            self.event = event
            self.dispatch = dispatch
            self.result = result
            self.decidedBy = decidedBy
        }
    }

    /// Published by the broker: one service answered a dispatch step (while a TRACE lease is held)
    public struct DispatchDidStep: LifelineEvent, Equatable {
        public static let name = EventName.dispatchDidStep
        /// The dispatch's id.
        public var dispatch: Int
        /// The dispatched event.
        public var event: String
        /// The service offered it.
        public var service: String
        /// Answered, error or timeout.
        public var status: String
        /// How long the step took.
        public var durationMs: Double

        public init(dispatch: Int, event: String, service: String, status: String, durationMs: Double) {
            self.dispatch = dispatch
            self.event = event
            self.service = service
            self.status = status
            self.durationMs = durationMs
        }
    }

    /// Published by the broker: a call through the broker was answered or timed out (while a TRACE lease is held)
    public struct CallDidFinish: LifelineEvent, Equatable {
        public static let name = EventName.callDidFinish
        /// The service called.
        public var service: String
        /// The method.
        public var method: String
        /// The answer's status (504 when it timed out).
        public var status: Int
        /// Forward to answer.
        public var durationMs: Double

        public init(service: String, method: String, status: Int, durationMs: Double) {
            self.service = service
            self.method = method
            self.status = status
            self.durationMs = durationMs
        }
    }

    /// Published by the broker: a micro-app session started (DTContext startApplication)
    public struct AppDidStart: LifelineEvent, Equatable {
        public static let name = EventName.appDidStart
        /// The session id.
        public var session: String
        /// The app.
        public var app: String
        /// The host service.
        public var host: String
        /// The launch mode.
        public var mode: String
        /// The parent session or null.
        public var parent: JSONValue
        /// The host's instance, when it runs several.
        public var instance: String?

        public init(
            session: String, app: String, host: String, mode: String, parent: JSONValue,
            instance: String? = nil
        ) {
            self.session = session
            self.app = app
            self.host = host
            self.mode = mode
            self.parent = parent
            self.instance = instance
        }
    }

    /// Published by the broker: a micro-app session left the stack
    public struct AppDidExit: LifelineEvent, Equatable {
        public static let name = EventName.appDidExit
        /// The session id.
        public var session: String
        /// The app.
        public var app: String
        /// Exited by force.
        public var forced: Bool
        /// The result it finished with, or null.
        public var result: JSONValue

        public init(session: String, app: String, forced: Bool, result: JSONValue) {
            self.session = session
            self.app = app
            self.forced = forced
            self.result = result
        }
    }

    /// Published by the broker: a micro-app session was lost with its host process
    public struct AppDidCrash: LifelineEvent, Equatable {
        public static let name = EventName.appDidCrash
        /// The session id.
        public var session: String
        /// The app.
        public var app: String
        /// The host that died.
        public var host: String
        /// The instance that died, when the host runs several.
        public var instance: String?

        public init(session: String, app: String, host: String, instance: String? = nil) {
            self.session = session
            self.app = app
            self.host = host
            self.instance = instance
        }
    }

    /// Published by the broker: the boot loader started
    public struct BootDidStart: LifelineEvent, Equatable {
        public static let name = EventName.bootDidStart
        /// The boot's number.
        public var boot: Int
        /// How many tasks it plans.
        public var tasks: Int

        public init(boot: Int, tasks: Int) {
            self.boot = boot
            self.tasks = tasks
        }
    }

    /// Published by the broker: a boot task finished
    public struct BootTaskDidFinish: LifelineEvent, Equatable {
        public static let name = EventName.bootTaskDidFinish
        /// The boot's number.
        public var boot: Int
        /// The task.
        public var task: String
        /// The service that declared it.
        public var service: String
        /// Its phase.
        public var phase: String
        /// Done, skipped or failed.
        public var outcome: String
        /// Why, when not done; else null.
        public var reason: JSONValue
        /// How long it ran.
        public var durationMs: Double

        public init(
            boot: Int, task: String, service: String, phase: String, outcome: String, reason: JSONValue,
            durationMs: Double
        ) {
            self.boot = boot
            self.task = task
            self.service = service
            self.phase = phase
            self.outcome = outcome
            self.reason = reason
            self.durationMs = durationMs
        }
    }

    /// Published by the broker: the boot loader finished
    public struct BootDidFinish: LifelineEvent, Equatable {
        public static let name = EventName.bootDidFinish
        /// The boot's number.
        public var boot: Int
        /// Done, failed or refused.
        public var outcome: String
        /// What stopped it, or null.
        public var error: JSONValue
        /// How long it ran (absent when refused).
        public var durationMs: Double?

        public init(boot: Int, outcome: String, error: JSONValue, durationMs: Double? = nil) {
            self.boot = boot
            self.outcome = outcome
            self.error = error
            self.durationMs = durationMs
        }
    }
}

import Foundation
import Glibc
import LifelineProtocol
import LifelineSupport
import ZeroMQ

/// The broker process's sockets and event loop: a ROUTER for every request/reply and an XPUB for the
/// lifecycle bus, both owned by the thread that calls ``run()``, which feeds a ``Broker``.
///
/// The loop waits (`epoll` on the sockets' `ZMQ_FD` and the stop mailbox) until one of them is
/// readable or a timer is due, then drains each socket that may have input without blocking until
/// it is empty. A socket may have input after its descriptor was readable and after anything was
/// sent on it (a send may take in the signal that would have made the descriptor readable).
package final class BrokerServer {
    /// The control endpoints actually bound (wildcard ports resolved).
    package let controlEndpoints: [String]
    /// The bus endpoints actually bound.
    package let busEndpoints: [String]
    /// The broker's own context: releasing the server terminates it, which waits (up to the linger)
    /// until the last messages, such as DISCONNECT, have left.
    private let context: ZMQContext
    let router: ZMQSocket
    let bus: ZMQSocket
    private let mailbox = Mailbox<Signal>()
    private enum Signal: Sendable {
        case stop, reload
        case metrics(MetricsRequest)
    }
    /// The `/metrics` responder, when asked for one.
    private var metrics: MetricsServer?
    /// Where `/metrics` is served (`HOST:PORT`), if it is.
    package var metricsAddress: String? { metrics?.address }
    /// With CURVE: the ZAP handler, the policy file, and the connections each key last spoke on, to
    /// close those of a key that leaves the policy.
    let zap: ZAPHandler?
    let policyPath: String?
    var connections = KeyConnections()
    /// How long a revoked peer's connections stay open after its DISCONNECT was queued, so that
    /// libzmq's I/O thread has written it before the connection is shut.
    static let revocationGrace: UInt64 = 200_000_000
    var sender = ZMQSocket.Sender()
    var core: Broker
    var output: [BrokerOutput] = []
    /// Events gathered for the next bus message; kept between flushes with its buffers and last topic.
    var busRun = BusRun()
    let log: @Sendable (String) -> Void
    private let stateDirectory: URL?
    var journal: JournalFile?
    /// The state directory's lock, held while the broker runs.
    private var stateLock: FileLock?
    private let spin: UInt64
    /// True when a socket may hold input that its ZMQ_FD will not signal again: after the descriptor
    /// was readable, after a failed receive, after a reply went out on the ROUTER (a send may take in
    /// the signal); a read that comes back empty settles it.
    var routerMayHaveInput = true
    /// The same for the XPUB (subscription notices), set when its descriptor was readable.
    var busMayHaveInput = true
    /// When the XPUB is read after events went out on it (monotonic nanoseconds): a send may take in
    /// the signal of a subscription notice that arrived just before it (libzmq looks at a socket's
    /// commands on a send about once a millisecond), and such a notice is then read within 10 ms
    /// instead of the XPUB being read after every publish.
    var busReadDue: UInt64?

    /// Replication and fencing, when this broker leads a group.
    let group: GroupLeader?
    /// The control socket's connections: a peer is its routing id *and* its connection's number,
    /// so a later connection that reuses a routing id inherits nothing of the earlier one.
    let routerConnections: ConnectionMonitor
    /// The bus socket's connections, for the subscriptions each holds.
    let busConnections: ConnectionMonitor
    /// What each bus connection subscribed to, and how often it was refused.
    var subscriptions: BusSubscriptionLedger
    /// When to give freed memory back to the system, after a bus connection that held or sent much
    /// closed (libzmq frees its subscriptions when it processes the closing, a moment later).
    var trimDue: UInt64?
    /// Messages for control peers whose queue is full.
    var backlogs: PeerBacklogs

    /// Binds the sockets on the calling thread; ``run()`` must be called on the same thread.
    package convenience init(
        configuration: BrokerConfiguration, identity: BrokerIdentity,
        log: @escaping @Sendable (String) -> Void
    ) throws {
        try self.init(configuration: configuration, identity: identity, group: nil, log: log)
    }

    /// Binds the sockets on the calling thread, as the leader of a group when `group` is given: the
    /// state directory is then written by the group's replication, entry by entry as each commits.
    package init(
        configuration: BrokerConfiguration, identity: BrokerIdentity, group: GroupLeader?,
        log: @escaping @Sendable (String) -> Void
    ) throws {
        self.group = group
        if let problem = configuration.securityProblem { throw SecurityError(problem) }
        context = try ZMQContext()
        var policy: AccessPolicy?
        if let path = configuration.policyPath {
            do {
                policy = try AccessPolicy(path: path)
            } catch {
                throw SecurityError(error.message)
            }
        }
        policyPath = configuration.policyPath
        if configuration.curveKeys != nil {
            guard CurveKeyPair.isAvailable else {
                throw SecurityError("this libzmq was built without CURVE (zmq_has(\"curve\") is false)")
            }
            zap = try ZAPHandler(
                context: context, admissions: [ZAPHandler.brokerDomain: .init(policy?.names)], log: log)
            if policy == nil { log("CURVE without --policy: any client key may connect and do anything") }
        } else {
            zap = nil
        }
        router = try ZMQSocket(context, type: .router)
        routerConnections = try ConnectionMonitor(router, context: context, name: "control")
        try router.set(.routerMandatory, 1)
        try router.set(.sendHighWaterMark, 100_000)
        try router.set(.receiveHighWaterMark, 100_000)
        try router.set(.maxMessageSize, 4 * configuration.maximumMessageBytes)
        bus = try ZMQSocket(context, type: .xpub)
        busConnections = try ConnectionMonitor(bus, context: context, name: "bus")
        subscriptions = BusSubscriptionLedger(limit: configuration.maximumSubscriptionsPerConnection)
        backlogs = PeerBacklogs(
            limitPerPeer: configuration.backlogBytesPerPeer, limit: configuration.backlogBytes)
        // libzmq reads every queued notice of a connection into its tries at once: a short queue
        // bounds what one burst of refused subscriptions costs before the broker cuts the sender off.
        try bus.set(.receiveHighWaterMark, 32)
        // Nothing but subscriptions flows towards the broker on the bus: a small kernel buffer bounds
        // what a flooding connection has in flight when it is cut off (each notice in it still
        // reaches libzmq's tries).
        try bus.set(.receiveBuffer, 8192)
        try bus.set(.xpubVerbose, 1)
        // The broker applies each subscription itself (or refuses it): see BusSubscriptionRule.
        try bus.set(.xpubManual, 1)
        try bus.set(.sendHighWaterMark, configuration.busHighWaterMark)
        // A subscriber sends only subscriptions: no accepted one is longer than a marker or an event
        // name. A longer message closes its connection before libzmq allocates it.
        try bus.set(.maxMessageSize, BusSubscriptionRule.maximumMessageBytes)
        var controls: [String] = []
        if let keys = configuration.curveKeys {
            try router.secureAsServer(keys, domain: ZAPHandler.brokerDomain)
            try bus.secureAsServer(keys, domain: ZAPHandler.brokerDomain)
        }
        for endpoint in configuration.controlEndpoints {
            try GroupBinding.bind(router, endpoint)
            controls.append(try router.lastEndpoint())
        }
        var buses: [String] = []
        for endpoint in configuration.busEndpoints {
            try GroupBinding.bind(bus, endpoint)
            buses.append(try bus.lastEndpoint())
        }
        controlEndpoints = controls
        busEndpoints = buses
        self.log = log
        spin = UInt64(configuration.spinMicroseconds) * 1000
        var saved = SavedState()
        if let path = configuration.stateDirectory {
            let directory = URL(fileURLWithPath: path)
            saved = try SavedState(directory: directory, locking: group == nil, log: log)
            stateLock = saved.lock
            stateDirectory = directory
            journal =
                group == nil ? JournalFile(path: directory.appendingPathComponent("journal.log").path) : nil
        } else {
            stateDirectory = nil
            journal = nil
        }
        core = Broker(
            configuration: configuration, identity: identity, busEndpoints: buses,
            monotonic: SystemClock.now, wall: SystemClock.wallNanoseconds(),
            sessions: saved.sessions, bootState: saved.bootState, journal: saved.journal,
            lifecycle: saved.lifecycle)
        core.curve = configuration.curveKeys != nil
        if core.journalDamaged, let directory = stateDirectory {
            keepDamagedJournal(saved.journal, in: directory)
        }
        if let policy {
            core.apply(policy, now: SystemClock.now, into: &output)
            log("policy \(configuration.policyPath ?? ""): \(policy.grants.count) key(s) allowed")
        }
        if let address = configuration.metricsAddress {
            let mailbox = self.mailbox
            metrics = try MetricsServer(address: address, token: configuration.metricsToken) {
                let request = MetricsRequest()
                mailbox.post(.metrics(request))
                return request.wait(seconds: 2)
            }
        }
        for note in core.startupNotes { log(note) }
        output = core.takeStartupOutput()
        if let group {
            core.groupStatus = { group.status(now: SystemClock.monotonicNanoseconds()) }
            core.beginGroupTerm(rejoinWindow: GroupLeader.rejoinWindow(configuration), now: SystemClock.now)
            release(group.beginTerm())
        } else if saved.hadState {
            core.beginRestart(rejoinWindow: GroupLeader.rejoinWindow(configuration), now: SystemClock.now)
        }
        flush()
    }

    /// Writes `document` to `file` in the state directory: a temporary file, then a rename.
    func persist(_ file: String, _ document: JSONValue) {
        guard let stateDirectory else { return }
        do {
            let path = stateDirectory.appendingPathComponent(file)
            try Data(JSONWriter.encode(document)).write(to: path, options: .atomic)
            // Readable by the broker's user only, as the journal is.
            chmod(path.path, 0o600)
        } catch {
            log("could not save \(file) in \(stateDirectory.path): \(error)")
        }
    }

    /// Keeps the damaged journal's bytes as `journal.log.damaged-SECONDS` beside it before it is
    /// written again: what the broker could not restore is still there for whoever can.
    private func keepDamagedJournal(_ bytes: [UInt8], in directory: URL) {
        let copy = directory.appendingPathComponent("journal.log.damaged-\(time(nil))")
        do {
            try Data(bytes).write(to: copy, options: .withoutOverwriting)
            log("kept the damaged journal as \(copy.path)")
        } catch {
            log("could not keep the damaged journal as \(copy.path): \(error)")
        }
    }

    /// Why this broker stopped leading its group, when ``run()`` returned for that reason.
    package var deposedReason: String? { group?.deposed }

    /// This broker life's epoch.
    package var epoch: UInt64 { core.epoch }

    /// A function any thread may call to make ``run()`` return.
    package var stopper: @Sendable () -> Void {
        let mailbox = self.mailbox
        return { mailbox.post(.stop) }
    }

    /// A function any thread may call (on SIGHUP, say) to read the policy file again: keys it no
    /// longer lists are refused from the next handshake, and their connections closed.
    package var reloader: @Sendable () -> Void {
        let mailbox = self.mailbox
        return { mailbox.post(.reload) }
    }

    /// Serves until the stopper is called, then tells services it is leaving and closes the sockets.
    package func run() {
        let poller = ReadinessPoller()
        poller.watch(mailbox.fileDescriptor, tag: 0)
        do {
            poller.watch(Int32(try router.get(.fileDescriptor)), tag: 1)
            poller.watch(Int32(try bus.get(.fileDescriptor)), tag: 2)
            poller.watch(routerConnections.fileDescriptor, tag: 5)
            if let group, let descriptor = group.fileDescriptor {
                poller.watch(descriptor, tag: 3)
                poller.watch(group.noticeDescriptor, tag: 4)
            }
        } catch {
            log("could not watch the sockets: \(error); stopping")
            return
        }
        var lastActivity: UInt64 = 0
        // Under systemd with WatchdogSec=, the loop itself pings: a stuck loop gets restarted.
        let watchdog = SystemdNotifier.watchdogMilliseconds.map { UInt64($0) * 1_000_000 }
        var nextWatchdog = SystemClock.monotonicNanoseconds()
        while true {
            let now = SystemClock.monotonicNanoseconds()
            if let watchdog, now >= nextWatchdog {
                SystemdNotifier.notify("WATCHDOG=1")
                nextWatchdog = now + watchdog
            }
            if let group {
                // The lease first: a leader resumed after a pause past it releases nothing more.
                group.tick(now: now)
                if group.deposed == nil { release(group.drain(now: now)) }
                if group.deposed != nil { break }
            }
            flushBacklogs()
            if routerMayHaveInput {
                routerMayHaveInput = false
                if drainRouter() { lastActivity = now }
            }
            if busMayHaveInput || busReadDue.map({ now >= $0 }) == true {
                busMayHaveInput = false
                busReadDue = nil
                if drainBus() { lastActivity = now }
            }
            // A socket left with possible input (a drain sent on it) is drained again before waiting.
            var ready: UInt32 = 0
            if !routerMayHaveInput && !busMayHaveInput && group?.hasInput != true {
                let now = SystemClock.monotonicNanoseconds()
                var timeout = SystemClock.pollTimeout(
                    until: min(
                        core.nextDeadline().nanoseconds, watchdog == nil ? .max : nextWatchdog,
                        busReadDue ?? .max, connections.nextDue ?? .max, group?.nextDeadline ?? .max,
                        trimDue ?? .max),
                    now: now)
                if spin > 0 && now &- lastActivity < spin { timeout = 0 }
                // Room in a slow peer's queue wakes the loop through the ROUTER's descriptor (libzmq's
                // command); this look (every 5 ms, less often while a peer reads nothing) is the
                // safety net while messages wait for one.
                if !backlogs.isEmpty { timeout = min(timeout, backlogs.retryMilliseconds) }
                guard let readable = poller.wait(timeoutMilliseconds: Int32(clamping: timeout)) else {
                    log("epoll_wait failed: \(String(cString: strerror(errno))); stopping")
                    break
                }
                ready = readable
                if ready != 0 { lastActivity = SystemClock.monotonicNanoseconds() }
            }
            if ready & 2 != 0 { routerMayHaveInput = true }
            if ready & 32 != 0 {
                routerConnections.update()
                noteClosedConnections()
            }
            if ready & 4 != 0 { busMayHaveInput = true }
            if ready & 1 != 0 || mailbox.hasMessages {
                var stop = false
                for signal in mailbox.drain() {
                    switch signal {
                    case .stop: stop = true
                    case .reload: reload()
                    case .metrics(let request):
                        core.tick(now: SystemClock.now, into: &output)
                        flush()
                        request.fulfill(core.metricsText(handshakesRefused: zap?.refused ?? 0))
                    }
                }
                if stop { break }
            }
            if let due = trimDue, SystemClock.monotonicNanoseconds() >= due {
                trimDue = nil
                // Off this thread: trimming a large heap takes a while.
                DispatchQueue.global(qos: .utility).async { MemoryTrim.release() }
            }
            if let due = connections.nextDue, SystemClock.monotonicNanoseconds() >= due {
                let closed = connections.closeDue(now: SystemClock.monotonicNanoseconds())
                if closed > 0 { log("closed \(closed) connection(s) of revoked keys") }
            }
            let after = SystemClock.now
            if after >= core.nextDeadline() {
                core.tick(now: after, into: &output)
                flush()
            }
        }
        // What still waits for slow peers is not sent: their DISCONNECT goes straight to their queue.
        backlogs.forgetAll()
        if let group {
            // A leader that is not sure of its lease says nothing more; one that stops tells its
            // services, which find the next leader on their list at once.
            if group.deposed == nil {
                core.shutdown(reason: "broker shutting down", into: &output)
                sendNow(output.filter { if case .send = $0 { true } else { false } })
            }
            output.removeAll()
        } else {
            core.endApplication(now: SystemClock.now, into: &output)
            core.shutdown(reason: "broker shutting down", into: &output)
            flush()
        }
        try? router.set(.linger, 500)
        // Before the sockets (which linger) and their monitors' readers close: see stopMonitor.
        router.stopMonitor()
        bus.stopMonitor()
        router.close()
        bus.close()
        zap?.stop()
        metrics?.stop()
    }
}

import Foundation
import LifelineProtocol
import LifelineSupport
import Synchronization
import ZeroMQ

/// The loop run on the socket thread. One thread at a time runs it: a thread that hands it over
/// (``SocketExecutor``) does so between turns, under the executor's lock, and never touches it again.
final class SocketLoop: @unchecked Sendable {
    var connection: BrokerConnection
    let mailbox: Mailbox<ConnectionCommand>
    let executor: SocketExecutor
    let pending: PendingReplies
    let deliver: @Sendable (ConnectionEvent) -> Void
    /// The configuration's ``ConnectionConfiguration/deliverInline``.
    private let deliverInline: (@Sendable (ArraySlice<BusMessage>, UInt64) -> Int)?
    let context = ZMQContext.shared
    var control: ZMQSocket?
    var bus: ZMQSocket?
    var effects: [ConnectionEffect] = []
    /// The effects being performed (see ``apply()``).
    private var applying: [ConnectionEffect] = []
    /// The bus message being handled, read in libzmq's buffers.
    let busFrames = ZMQMultipart(capacity: 4)
    var finished = false
    /// The sockets' ZMQ_FD (see ``wait()``), read when each socket opens.
    var controlDescriptor: Int32 = -1
    var busDescriptor: Int32 = -1
    /// A plain client's monitor of the control socket (``BrokerConnection/controlLink(_:now:into:)``),
    /// its ZMQ_FD (tag 3), and whether it may hold events.
    var link: ZMQSocket?
    var linkDescriptor: Int32 = -1
    var linkMayHaveInput = false
    /// True when a socket may hold input that its ZMQ_FD will not signal again: after its ZMQ_FD
    /// was readable, after it opened, after we sent on it (a send may take in the signal).
    var controlMayHaveInput = false
    var busMayHaveInput = false
    /// Waits on the mailbox (tag 0) and the sockets' ZMQ_FD (tags 1 and 2).
    let poller = ReadinessPoller()
    /// Whether a turn that completed a request returns before it waits (a loop driven by the thread
    /// that waits for the request: ``BlockingConnection``).
    let returnsAfterCompletion: Bool
    /// A request was completed during this turn.
    var completed = false

    init(
        configuration: ConnectionConfiguration, mailbox: Mailbox<ConnectionCommand>, executor: SocketExecutor,
        pending: PendingReplies, returnsAfterCompletion: Bool = false,
        deliver: @escaping @Sendable (ConnectionEvent) -> Void
    ) {
        self.connection = BrokerConnection(configuration: configuration)
        self.returnsAfterCompletion = returnsAfterCompletion
        self.pending = pending
        self.mailbox = mailbox
        self.executor = executor
        self.deliver = deliver
        deliverInline = configuration.deliverInline
        poller.watch(mailbox.fileDescriptor, tag: 0)
    }

    func start() {
        connection.start(now: SystemClock.monotonicNanoseconds(), into: &effects)
        apply()
    }

    /// One turn: reads what is ready, runs the timers, carries out commands, and waits when nothing
    /// is left to do (when jobs wait it only looks: the caller runs them, then turns again). False
    /// once the connection has finished.
    func turn() -> Bool {
        guard !finished else { return false }
        // Before the timers: a connection made while this thread waited counts.
        if linkMayHaveInput { drainLink() }
        if controlMayHaveInput {
            controlMayHaveInput = false
            drainControl()
        }
        if busMayHaveInput {
            busMayHaveInput = false
            drainBus()
        }
        connection.tick(now: SystemClock.monotonicNanoseconds(), into: &effects)
        apply()
        if finished { return false }
        if mailbox.hasMessages {
            handleCommands()
            return !finished
        }
        if controlMayHaveInput || busMayHaveInput || linkMayHaveInput { return true }
        if completed {
            completed = false
            return true
        }
        // Jobs waiting: only look at what is ready (a task that keeps yielding must not hide the
        // sockets from the loop).
        let now = SystemClock.monotonicNanoseconds()
        let deadline = executor.hasJobs ? now : connection.nextDeadline
        connection.plannedTick = deadline
        let timeout = executor.hasJobs ? 0 : SystemClock.pollTimeout(until: deadline, now: now)
        guard let (commands, controlReady, busReady, linkReady) = wait(timeoutMilliseconds: timeout) else {
            return false
        }
        if linkReady { linkMayHaveInput = true }
        if controlReady { controlMayHaveInput = true }
        if busReady { busMayHaveInput = true }
        if commands { handleCommands() }
        return !finished
    }

    /// Closes the sockets (once the connection has finished).
    func close() {
        try? control?.set(.linger, 200)
        control?.stopMonitor()
        control?.close()
        bus?.close()
        link?.close()
    }

    /// One wait on the mailbox and the sockets' ZMQ_FD: a socket's descriptor turns readable when
    /// libzmq has news for it, and the socket is then drained until it is empty. (`zmq_poll` would
    /// look at every socket twice per wake-up, each look a system call; on a busy host of many
    /// services those calls were most of a service's CPU per event.) Nil when waiting fails.
    private func wait(timeoutMilliseconds: Int) -> (commands: Bool, control: Bool, bus: Bool, link: Bool)? {
        guard let ready = poller.wait(timeoutMilliseconds: Int32(clamping: timeoutMilliseconds)) else {
            deliver(.log("epoll_wait failed: \(String(cString: strerror(errno)))"))
            return nil
        }
        return (ready & 1 != 0, ready & 2 != 0, ready & 4 != 0, ready & 8 != 0)
    }

    /// Reads the control socket's monitor events into the connection.
    private func drainLink() {
        linkMayHaveInput = false
        guard let link else { return }
        while let frames = try? link.receiveFrames(dontWait: true), let first = frames.first {
            let event: LinkEvent
            switch ZMQSocket.monitorEvent(first) {
            case ZMQSocket.connectedEvent: event = .connected
            case ZMQSocket.connectRetriedEvent: event = .refused
            case ZMQSocket.handshakeSucceededEvent: event = .handshakeSucceeded
            case ZMQSocket.handshakeFailedAuthEvent: event = .handshakeFailed(auth: true, detailed: true)
            case ZMQSocket.handshakeFailedProtocolEvent: event = .handshakeFailed(auth: false, detailed: true)
            case ZMQSocket.handshakeFailedEvent: event = .handshakeFailed(auth: false, detailed: false)
            case ZMQSocket.disconnectedEvent:
                // Answers the link carried before it closed are read first: they are not lost.
                drainControl()
                if self.link !== link { return }
                event = .disconnected
            default: continue
            }
            connection.controlLink(event, now: SystemClock.monotonicNanoseconds(), into: &effects)
            apply()
            // A move to another member replaced the socket and its monitor.
            if self.link !== link { return }
        }
    }

    /// Watches `socket`'s connects, handshakes and disconnects (before it connects): a plain client
    /// learns when its broker is not there at all, refuses it, or goes away.
    private func watchLink(of socket: ZMQSocket) throws {
        closeLink()
        guard connection.watchesLink else { return }
        let endpoint = "inproc://lifeline-link-\(Environment.uniqueToken())"
        try socket.monitor(
            endpoint,
            events: ZMQSocket.connectedEvent | ZMQSocket.connectRetriedEvent
                | ZMQSocket.handshakeSucceededEvent
                | ZMQSocket.handshakeFailedAuthEvent | ZMQSocket.handshakeFailedProtocolEvent
                | ZMQSocket.handshakeFailedEvent | ZMQSocket.disconnectedEvent)
        let pair = try ZMQSocket(context, type: .pair)
        try pair.set(.linger, 0)
        try pair.set(.receiveHighWaterMark, 0)
        try pair.connect(endpoint)
        link = pair
        linkDescriptor = Int32(try pair.get(.fileDescriptor))
        poller.watch(linkDescriptor, tag: 3)
        linkMayHaveInput = true
    }

    /// Closes the control socket, if one is open: its monitor first (see ``ZMQSocket/stopMonitor()``),
    /// and with what it queued dropped when `discardingQueue`.
    private func closeControl(discardingQueue: Bool) {
        guard let control else { return }
        poller.unwatch(controlDescriptor)
        if discardingQueue { try? control.set(.linger, 0) }
        control.stopMonitor()
        control.close()
        self.control = nil
        controlDescriptor = -1
    }

    /// Closes the PAIR that reads the control socket's monitor, if there is one.
    private func closeLink() {
        guard let link else { return }
        poller.unwatch(linkDescriptor)
        link.close()
        self.link = nil
        linkDescriptor = -1
    }

    private func handleCommands() {
        let now = SystemClock.monotonicNanoseconds()
        for command in mailbox.drain() {
            switch command {
            case .request(let request, let ticket, let timeout):
                connection.submit(
                    request, ticket: ticket, timeoutMilliseconds: timeout, now: now, into: &effects)
            case .answer(let reply): connection.answer(reply, into: &effects)
            case .acknowledge(let sequence, let epoch, let error):
                connection.acknowledge(sequence: sequence, epoch: epoch, error: error, into: &effects)
            case .cancel(let ticket): connection.cancel(ticket: ticket)
            case .handlersFull(let name, let sequence, let topicSequence):
                connection.handlersRefused(
                    name, sequence: sequence, topicSequence: topicSequence, into: &effects)
            case .handlersHaveRoom(let resume):
                resume()
                connection.handlersHaveRoom(into: &effects)
            case .shutdown: connection.shutdown(now: now, into: &effects)
            }
        }
        apply()
    }

    private func drainControl() {
        guard let control else { return }
        while true {
            // This read settles what was possible before it; a send after it raises the flag again.
            controlMayHaveInput = false
            guard let frames = receive(control) else { break }
            connection.handleControl(frames, now: SystemClock.monotonicNanoseconds(), into: &effects)
            apply()
            if self.control !== control { return }
            // An answer a handler gave inside this delivery leaves now, not after the next receive.
            if mailbox.hasMessages {
                handleCommands()
                if self.control !== control { return }
            }
        }
    }

    /// Receives what is waiting on the bus (up to 64 events, or one bus message of more) before
    /// handlers run, so that a burst is handled without a suspension per event and the handlers'
    /// queue never takes more than that at once; a single event goes straight through.
    private func drainBus() {
        guard let bus else { return }
        var batch = 0
        var first = true
        while true {
            busMayHaveInput = false
            do {
                guard try bus.receive(into: busFrames, dontWait: true) else { break }
            } catch {
                deliver(.log("receive failed: \(error)"))
                break
            }
            let stamp = SystemClock.monotonicNanoseconds()
            let frames = busFrames
            batch += connection.handleBus(receivedAt: stamp, into: &effects) { () throws(ProtocolError) in
                try BusMessage.checkFrameCount(frames.count)
                precondition(frames.capacity >= 4, "the bus holder keeps a message's four frames")
                return try BusMessage.decodeBatch(
                    topic: frames[0], protocolID: frames[1], headers: frames[2], payloads: frames[3])
            }
            busFrames.release()
            // The first message of a wake-up is handled before the socket is read again (that read,
            // usually empty, costs two system calls); a burst is then handled 64 events at a time.
            if batch >= 64 || first {
                first = false
                apply()
                if self.bus !== bus { return }
                batch = 0
            }
        }
        apply()
    }

    private func receive(_ socket: ZMQSocket) -> [[UInt8]]? {
        do {
            return try socket.receiveFrames(dontWait: true)
        } catch {
            deliver(.log("receive failed: \(error)"))
            return nil
        }
    }

    private func apply() {
        guard !effects.isEmpty else { return }
        // The two arrays trade places, keeping their room: what performing adds waits for the next
        // apply. Taken from the back of the reversed list, in order, each effect is moved out of the
        // array instead of copied.
        swap(&effects, &applying)
        applying.reverse()
        while let effect = applying.popLast() {
            do {
                try perform(effect)
            } catch {
                deliver(.log("\(effect) failed: \(error)"))
            }
        }
    }

    private func perform(_ effect: ConnectionEffect) throws {
        switch effect {
        case .closeControl:
            closeControl(discardingQueue: true)
            closeLink()
        case .openControl, .reopenControlDiscardingQueue:
            closeControl(discardingQueue: effect == .reopenControlDiscardingQueue)
            let socket = try ZMQSocket(context, type: .dealer)
            try socket.set(.sendHighWaterMark, 100_000)
            try socket.set(.receiveHighWaterMark, 100_000)
            try connection.configuration.credentials?.secure(socket)
            try watchLink(of: socket)
            try socket.connect(connection.currentEndpoint)
            control = socket
            controlDescriptor = Int32(try socket.get(.fileDescriptor))
            poller.watch(controlDescriptor, tag: 1)
            controlMayHaveInput = true
        case .sendControl(let frames):
            guard let control else { return }
            controlMayHaveInput = true
            if try !control.send(frames: frames, dontWait: true) {
                deliver(
                    .log(
                        "dropped a \(frames.count)-frame message: the control socket is not connected (or its queue is full)"
                    ))
            }
        case .openBus(let endpoint, let subscriptions):
            if let bus {
                poller.unwatch(busDescriptor)
                bus.close()
                self.bus = nil
                busDescriptor = -1
            }
            let socket = try ZMQSocket(context, type: .sub)
            // Bounded: past it the broker's bus drops this subscriber's events, and the topic
            // sequence gap makes the connection replay them from the journal.
            try socket.set(.receiveHighWaterMark, 100_000)
            try connection.configuration.credentials?.secure(socket)
            try socket.connect(endpoint)
            for topic in subscriptions { try socket.set(.subscribe, topic) }
            bus = socket
            busDescriptor = Int32(try socket.get(.fileDescriptor))
            poller.watch(busDescriptor, tag: 2)
            busMayHaveInput = true
        case .deliver(.event(let event, let receivedAt, let replayed)):
            deliver(
                .event(
                    event, receivedAt: receivedAt == 0 ? SystemClock.monotonicNanoseconds() : receivedAt,
                    replayed: replayed))
        case .deliverRun(let run, let receivedAt):
            let stamp = receivedAt == 0 ? SystemClock.monotonicNanoseconds() : receivedAt
            let taken = deliverInline?(run, stamp) ?? 0
            for message in run.dropFirst(taken) {
                deliver(.event(message, receivedAt: stamp, replayed: false))
            }
        case .deliver(.completion(let ticket, let result)):
            pending.resume(ticket, with: result)
            completed = returnsAfterCompletion
        case .deliver(let event):
            switch event {
            case .refused, .finished:
                finished = true
                pending.failAll(LifelineError(.unavailable, "the connection was closed"))
            default: break
            }
            deliver(event)
        }
    }
}

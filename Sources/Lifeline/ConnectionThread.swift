import Foundation
import LifelineProtocol
import LifelineSupport
import Synchronization
import ZeroMQ

/// Owns the sockets of one ``BrokerConnection`` on a dedicated thread (the zactor pattern): a DEALER to
/// the broker, a SUB on the bus, and a ``Mailbox`` for commands from other threads, all under one
/// `zmq_poll`, whose timeout drives the session's timers. No ZeroMQ call runs anywhere else.
/// Deliveries leave through `deliver`, called on the socket thread.
final class ConnectionThread: Sendable {
    /// What other threads may ask of the socket thread.
    enum Command: Sendable {
        case request(ControlRequest, ticket: UInt64, timeoutMilliseconds: Int)
        case answer(ControlReply)
        case acknowledge(sequence: UInt64, epoch: UInt64, error: String?)
        case shutdown
    }

    /// What the socket thread hands to the application.
    enum Delivery: Sendable {
        /// A bus event, when the socket thread received it (CLOCK_MONOTONIC), and whether it was
        /// replayed from the journal.
        case event(BusMessage, receivedAt: UInt64, replayed: Bool)
        case request(ControlRequest)
        /// A dispatch step, handled in order with the events.
        case offer(ControlRequest)
        case gap(GapNotice)
        case completion(ticket: UInt64, Result<ControlReply, LifelineError>)
        case joined(epoch: UInt64, first: Bool, sequence: UInt64, lifecycle: String)
        case refused(LifelineError)
        case log(String)
        case finished
    }

    private let mailbox: Mailbox<Command>
    private let done = ThreadCompletion()
    /// Runs jobs of tasks that prefer it on this connection's socket thread.
    let executor: SocketThreadExecutor

    /// Starts the thread and connects; `deliver` receives everything the session produces.
    init(
        configuration: ConnectionConfiguration, name: String, deliver: @escaping @Sendable (Delivery) -> Void
    ) {
        let mailbox = Mailbox<Command>()
        let executor = SocketThreadExecutor(wake: { mailbox.wake() })
        self.mailbox = mailbox
        self.executor = executor
        let done = self.done
        let thread = Thread {
            ThreadName.set(name)
            executor.bindToCurrentThread()
            var loop = SessionLoop(
                configuration: configuration, mailbox: mailbox, executor: executor, deliver: deliver)
            loop.run()
            executor.close()
            done.complete()
        }
        thread.name = name
        thread.start()
    }

    /// Posts a command to the socket thread.
    func post(_ command: Command) { mailbox.post(command) }

    /// Waits until the thread has closed its sockets.
    func finished() async { await done.wait() }
}

/// Resumes waiters once a thread has ended.
final class ThreadCompletion: Sendable {
    private let state = Mutex<(done: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func complete() {
        let waiters = state.withLock { state in
            state.done = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state in
                if !state.done { state.waiters.append(continuation) }
                return state.done
            }
            if done { continuation.resume() }
        }
    }
}

/// The loop run on the socket thread.
private struct SessionLoop {
    var session: BrokerConnection
    let mailbox: Mailbox<ConnectionThread.Command>
    let executor: SocketThreadExecutor
    let deliver: @Sendable (ConnectionThread.Delivery) -> Void
    let context = ZMQContext.shared
    var control: ZMQSocket?
    var bus: ZMQSocket?
    var effects: [ConnectionEffect] = []
    var finished = false

    init(
        configuration: ConnectionConfiguration, mailbox: Mailbox<ConnectionThread.Command>,
        executor: SocketThreadExecutor,
        deliver: @escaping @Sendable (ConnectionThread.Delivery) -> Void
    ) {
        self.session = BrokerConnection(configuration: configuration)
        self.mailbox = mailbox
        self.executor = executor
        self.deliver = deliver
    }

    mutating func run() {
        session.start(now: SystemClock.monotonicNanoseconds(), into: &effects)
        apply()
        while !finished {
            var poller = ZMQPoller()
            let mailboxIndex = poller.add(fileDescriptor: mailbox.fileDescriptor)
            let controlIndex = control.map { poller.add($0) }
            let busIndex = bus.map { poller.add($0) }
            let timeout =
                executor.hasPending
                ? 0
                : SystemClock.pollTimeout(
                    until: session.nextDeadline, now: SystemClock.monotonicNanoseconds())
            do {
                try poller.poll(timeoutMilliseconds: timeout)
            } catch {
                deliver(.log("poll failed: \(error)"))
                break
            }
            if poller.isReadable(mailboxIndex) { handleCommands() }
            if let controlIndex, poller.isReadable(controlIndex) { drainControl() }
            if let busIndex, poller.isReadable(busIndex) { drainBus() }
            session.tick(now: SystemClock.monotonicNanoseconds(), into: &effects)
            apply()
        }
        try? control?.set(.linger, 200)
        control?.close()
        bus?.close()
    }

    private mutating func handleCommands() {
        let now = SystemClock.monotonicNanoseconds()
        for command in mailbox.drain() {
            switch command {
            case .request(let request, let ticket, let timeout):
                session.submit(
                    request, ticket: ticket, timeoutMilliseconds: timeout, now: now, into: &effects)
            case .answer(let reply): session.answer(reply, into: &effects)
            case .acknowledge(let sequence, let epoch, let error):
                session.acknowledge(sequence: sequence, epoch: epoch, error: error, into: &effects)
            case .shutdown: session.shutdown(now: now, into: &effects)
            }
        }
        apply()
    }

    private mutating func drainControl() {
        guard let control else { return }
        while let frames = receive(control) {
            session.handleControl(frames, now: SystemClock.monotonicNanoseconds(), into: &effects)
            apply()
            if self.control !== control { return }
        }
    }

    /// Receives what is waiting on the bus (up to a batch) before handlers run, so that a burst is
    /// handled without a suspension per event; a single event goes straight through.
    private mutating func drainBus() {
        guard let bus else { return }
        var batch = 0
        while let frames = receive(bus) {
            session.handleBus(frames, into: &effects)
            batch += 1
            if batch == 64 {
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

    private mutating func apply() {
        for effect in effects {
            do {
                try perform(effect)
            } catch {
                deliver(.log("\(effect) failed: \(error)"))
            }
        }
        effects.removeAll(keepingCapacity: true)
        executor.runPending()
    }

    private mutating func perform(_ effect: ConnectionEffect) throws {
        switch effect {
        case .openControl:
            control?.close()
            let socket = try ZMQSocket(context, type: .dealer)
            try socket.set(.sendHighWaterMark, 100_000)
            try socket.set(.receiveHighWaterMark, 100_000)
            try socket.connect(session.configuration.brokerEndpoint)
            control = socket
        case .sendControl(let frames):
            guard let control else { return }
            if try !control.send(frames: frames, dontWait: true) {
                deliver(
                    .log("dropped a \(frames.count)-frame message: the control socket's send queue is full"))
            }
        case .openBus(let endpoint, let subscriptions):
            bus?.close()
            let socket = try ZMQSocket(context, type: .sub)
            try socket.set(.receiveHighWaterMark, 0)
            try socket.connect(endpoint)
            for topic in subscriptions { try socket.set(.subscribe, topic) }
            bus = socket
        case .deliverEvent(let event, let replayed):
            deliver(.event(event, receivedAt: SystemClock.monotonicNanoseconds(), replayed: replayed))
        case .deliverRequest(let request): deliver(.request(request))
        case .deliverOffer(let request): deliver(.offer(request))
        case .gap(let notice): deliver(.gap(notice))
        case .complete(let ticket, let result): deliver(.completion(ticket: ticket, result))
        case .joined(let epoch, let first, let sequence, let lifecycle):
            deliver(.joined(epoch: epoch, first: first, sequence: sequence, lifecycle: lifecycle))
        case .refused(let error):
            deliver(.refused(error))
            finished = true
        case .finished:
            deliver(.finished)
            finished = true
        case .log(let line): deliver(.log(line))
        }
    }
}

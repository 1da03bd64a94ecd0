import Foundation
import LifelineProtocol
import LifelineSupport
import Synchronization
import ZeroMQ

/// Owns the sockets of one ``BrokerConnection`` on a dedicated thread (the zactor pattern): a DEALER to
/// the broker, a SUB on the bus, and a ``Mailbox`` for commands from other threads, all under one
/// wait (``ReadinessPoller``: the mailbox and the sockets' `ZMQ_FD`), whose timeout drives the
/// connection's timers. No ZeroMQ call runs anywhere else. Between turns it runs the jobs of the
/// tasks that prefer it (``SocketExecutor``); when one holds it, the loop — sockets included, which
/// libzmq lets move between threads behind a memory barrier (the executor's lock) — goes on in a new
/// thread.
/// Request completions resume their waiters in `pending`; every other delivery leaves through
/// `deliver`, called on the socket thread.
final class ConnectionThread: Connection {
    private let mailbox: Mailbox<ConnectionCommand>
    private let done = ThreadCompletion()
    private let owner = OwnerThread()
    /// Runs tasks on the socket thread between turns of its loop (see ``SocketExecutor``).
    let socketExecutor: SocketExecutor

    var executor: (any TaskExecutor)? { socketExecutor }

    /// Starts the thread and connects; `deliver` receives everything the connection produces but
    /// request completions, which resume their waiters in `pending`.
    init(
        configuration: ConnectionConfiguration, name: String, pending: PendingReplies,
        deliver: @escaping @Sendable (ConnectionEvent) -> Void
    ) {
        let mailbox = Mailbox<ConnectionCommand>()
        self.mailbox = mailbox
        let done = self.done
        let owner = self.owner
        let executor = SocketExecutor(owner: owner, wake: { mailbox.wake() }, log: { deliver(.log($0)) })
        socketExecutor = executor
        let thread = Thread {
            ThreadName.set(name)
            let loop = SocketLoop(
                configuration: configuration, mailbox: mailbox, executor: executor, pending: pending,
                deliver: deliver)
            executor.onTakeOver { token in
                let successor = Thread {
                    ThreadName.set(name)
                    Self.drive(loop, as: token, executor: executor, owner: owner, done: done)
                }
                successor.name = name
                successor.start()
            }
            LoopMonitor.shared.watch(executor)
            loop.start()
            Self.drive(loop, as: 0, executor: executor, owner: owner, done: done)
        }
        thread.name = name
        thread.start()
    }

    /// Runs `loop` on this thread as its owner `token`, and the executor's jobs between its turns,
    /// until the connection finishes or another thread takes the loop over.
    private static func drive(
        _ loop: SocketLoop, as token: UInt64, executor: SocketExecutor, owner: OwnerThread,
        done: ThreadCompletion
    ) {
        owner.bindToCurrentThread()
        while loop.turn() {
            guard executor.runJobs(as: token) else { return }
        }
        loop.close()
        executor.close()
        done.complete()
    }

    /// Posts a command to the socket thread (from the socket thread itself without a wake-up: it
    /// looks at its mailbox before it polls).
    func post(_ command: ConnectionCommand) {
        if owner.isCurrent {
            mailbox.postFromOwner(command)
        } else {
            mailbox.post(command)
        }
    }

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

import Glibc
import Synchronization

/// The command pipe of a socket-owning thread: any thread posts, the owner drains. The owner polls
/// ``fileDescriptor`` (the read end of a non-blocking pipe) together with its sockets, so a post
/// wakes it.
public final class Mailbox<Message: Sendable>: Sendable {
    /// Readable when messages are waiting.
    public let fileDescriptor: Int32
    private let writeDescriptor: Int32
    private let queue = Mutex<[Message]>([])
    /// How many messages `queue` holds, readable without the lock (and without generic code: the
    /// owner asks on every turn of its loop).
    private let waiting = Atomic<Int>(0)
    /// Set after a byte was written to the pipe: only then does ``drain()`` read it (set after the
    /// write, so a drain never leaves a byte it did not see the flag for).
    private let signalled = Atomic<Bool>(false)

    /// Creates an empty mailbox.
    public init() {
        var ends: [Int32] = [0, 0]
        precondition(pipe(&ends) == 0, "pipe() failed: errno \(errno)")
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        fileDescriptor = ends[0]
        writeDescriptor = ends[1]
    }

    deinit {
        close(fileDescriptor)
        close(writeDescriptor)
    }

    /// Queues `message` and wakes the owner if it was idle.
    public func post(_ message: Message) {
        let wasEmpty = queue.withLock { messages in
            messages.append(message)
            waiting.store(messages.count, ordering: .releasing)
            return messages.count == 1
        }
        if wasEmpty { wake() }
    }

    /// Queues `message` without waking anyone: for the owner thread itself, which looks at
    /// ``hasMessages`` before it polls (a wake-up through the pipe would cost two system calls).
    public func postFromOwner(_ message: Message) {
        queue.withLock { messages in
            messages.append(message)
            waiting.store(messages.count, ordering: .releasing)
        }
    }

    /// True when messages wait (owner thread, before it polls).
    public var hasMessages: Bool { waiting.load(ordering: .acquiring) > 0 }

    /// Makes the owner's poll return without posting anything.
    public func wake() {
        var byte: UInt8 = 1
        _ = write(writeDescriptor, &byte, 1)
        signalled.store(true, ordering: .releasing)
    }

    /// Takes every queued message, oldest first (owner thread only).
    public func drain() -> [Message] {
        if signalled.exchange(false, ordering: .acquiringAndReleasing) {
            var buffer = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
            while withUnsafeMutableBytes(of: &buffer, { read(fileDescriptor, $0.baseAddress, $0.count) }) > 0
            {}
        }
        return queue.withLock { messages in
            waiting.store(0, ordering: .releasing)
            defer { messages.removeAll(keepingCapacity: true) }
            return messages
        }
    }
}

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
    /// Bytes written to the pipe, or about to be, and not read yet: ``drain()`` reads the pipe only
    /// when there may be one. Counted before the write, so that a byte is never in the pipe unseen
    /// (a drain between a flag raised after the write and the write itself left the byte there, and
    /// the owner's poll returned at once, turn after turn, until the poster ran again: on a busy
    /// host, a socket thread spinning for milliseconds).
    private let unreadBytes = Atomic<Int>(0)

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
        countWakeUp()
        writeWakeUp()
    }

    /// The first half of ``wake()``: the byte is counted before it is written.
    package func countWakeUp() { unreadBytes.add(1, ordering: .acquiringAndReleasing) }

    /// The second half of ``wake()``, after ``countWakeUp()``: a drain that falls between the two
    /// finds the pipe empty, and the next one reads the byte.
    package func writeWakeUp() {
        var byte: UInt8 = 1
        // A full pipe is readable already: the owner wakes without this byte.
        if write(writeDescriptor, &byte, 1) != 1 { unreadBytes.subtract(1, ordering: .acquiringAndReleasing) }
    }

    /// Takes every queued message, oldest first (owner thread only).
    public func drain() -> [Message] {
        if unreadBytes.load(ordering: .acquiring) > 0 {
            var buffer = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
            var read = 0
            while true {
                let count = withUnsafeMutableBytes(of: &buffer) {
                    Glibc.read(fileDescriptor, $0.baseAddress, $0.count)
                }
                guard count > 0 else { break }
                read += count
            }
            if read > 0 { unreadBytes.subtract(read, ordering: .acquiringAndReleasing) }
        }
        return queue.withLock { messages in
            waiting.store(0, ordering: .releasing)
            defer { messages.removeAll(keepingCapacity: true) }
            return messages
        }
    }
}

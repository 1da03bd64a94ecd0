import CZeroMQ
import Glibc

/// Waits until one of a few file descriptors (a mailbox pipe, sockets' `ZMQ_FD`) is readable, with `epoll`: the descriptors are
/// registered once, so a wait costs one system call whatever their number (`poll` sets up and tears
/// down a wait queue entry per descriptor on every call). Each descriptor carries a tag from 0 to
/// 31; a wait answers the set of tags that are readable. Owner thread only.
public final class ReadinessPoller {
    private let descriptor: Int32

    /// A poller watching nothing yet.
    public init() {
        descriptor = epoll_create1(Int32(EPOLL_CLOEXEC))
        precondition(descriptor >= 0, "epoll_create1 failed: errno \(errno)")
    }

    deinit { close(descriptor) }

    /// Watches `fileDescriptor` for input, under `tag` (0...31).
    public func watch(_ fileDescriptor: Int32, tag: UInt32) {
        precondition(tag < 32, "tags are 0...31")
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u32 = tag
        if epoll_ctl(descriptor, EPOLL_CTL_ADD, fileDescriptor, &event) != 0, errno == EEXIST {
            _ = epoll_ctl(descriptor, EPOLL_CTL_MOD, fileDescriptor, &event)
        }
    }

    /// Stops watching `fileDescriptor` (call it before the descriptor is closed).
    public func unwatch(_ fileDescriptor: Int32) {
        var event = epoll_event()
        _ = epoll_ctl(descriptor, EPOLL_CTL_DEL, fileDescriptor, &event)
    }

    /// Waits up to `timeoutMilliseconds` (-1: no limit) and returns the tags that are readable, as
    /// bits (`1 << tag`): 0 when the time ran out or a signal interrupted the wait; nil when waiting
    /// failed, with `errno` set.
    public func wait(timeoutMilliseconds: Int32) -> UInt32? {
        var events = (epoll_event(), epoll_event(), epoll_event(), epoll_event())
        let mask = EPOLLIN.rawValue | EPOLLERR.rawValue | EPOLLHUP.rawValue
        return withUnsafeMutablePointer(to: &events) { tuple in
            tuple.withMemoryRebound(to: epoll_event.self, capacity: 4) { list -> UInt32? in
                let count = epoll_wait(descriptor, list, 4, timeoutMilliseconds)
                if count < 0 { return errno == EINTR ? 0 : nil }
                var ready: UInt32 = 0
                for index in 0..<Int(count) where list[index].events & mask != 0 {
                    ready |= 1 << list[index].data.u32
                }
                return ready
            }
        }
    }
}

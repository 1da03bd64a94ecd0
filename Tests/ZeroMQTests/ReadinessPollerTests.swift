import Glibc
import Testing

@testable import ZeroMQ

@Suite("ReadinessPoller: the tags of readable descriptors, one epoll_wait", .timeLimit(.minutes(1)))
struct ReadinessPollerTests {
    private func makePipe() -> (read: Int32, write: Int32) {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        return (ends[0], ends[1])
    }

    @Test("readable descriptors answer their tags; an unwatched one is not seen; a timeout answers none")
    func tags() throws {
        let poller = ReadinessPoller()
        let first = makePipe()
        let second = makePipe()
        defer { for fd in [first.read, first.write, second.read, second.write] { close(fd) } }
        poller.watch(first.read, tag: 0)
        poller.watch(second.read, tag: 5)
        #expect(poller.wait(timeoutMilliseconds: 0) == 0)
        var byte: UInt8 = 1
        #expect(write(second.write, &byte, 1) == 1)
        #expect(poller.wait(timeoutMilliseconds: 1000) == 1 << 5)
        #expect(write(first.write, &byte, 1) == 1)
        let both: UInt32 = 1 << 5 | 1
        #expect(poller.wait(timeoutMilliseconds: 1000) == both, "level-triggered: still readable")
        poller.unwatch(second.read)
        #expect(poller.wait(timeoutMilliseconds: 1000) == 1)
        poller.watch(first.read, tag: 2)
        #expect(poller.wait(timeoutMilliseconds: 1000) == 1 << 2, "watching again changes the tag")
    }

    @Test("a socket's ZMQ_FD turns readable when a message arrives for it")
    func socketDescriptor() throws {
        let context = ZMQContext.shared
        let server = try ZMQSocket(context, type: .pull)
        try server.bind("inproc://readiness-poller")
        let client = try ZMQSocket(context, type: .push)
        try client.connect("inproc://readiness-poller")
        let poller = ReadinessPoller()
        poller.watch(Int32(try server.get(.fileDescriptor)), tag: 1)
        while try server.receiveFrames(dontWait: true) != nil {}
        #expect(try client.send(frames: [Array("hi".utf8)], dontWait: true))
        #expect(poller.wait(timeoutMilliseconds: 2000) == 1 << 1)
        #expect(try server.receiveFrames(dontWait: true) == [Array("hi".utf8)])
    }
}

import Foundation
import Glibc
import Testing

@testable import ZeroMQ

@Suite("ZeroMQ binding", .timeLimit(.minutes(1)))
struct ZMQSocketTests {
    let context = try! ZMQContext()

    private func pair(_ first: SocketType, _ second: SocketType, transport: String) throws -> (
        ZMQSocket, ZMQSocket
    ) {
        let server = try ZMQSocket(context, type: first)
        try server.bind(transport)
        let client = try ZMQSocket(context, type: second)
        try client.connect(try server.lastEndpoint())
        return (server, client)
    }

    @Test(
        "a 0-byte frame and a 4 MiB frame round-trip intact",
        arguments: ["inproc://big", "tcp://127.0.0.1:*"])
    func largeAndEmptyFrames(transport: String) throws {
        let (server, client) = try pair(.router, .dealer, transport: transport)
        let big = (0..<(4 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try client.send(frames: [[], big, Array("tail".utf8)])
        let received = try #require(try server.receiveFrames())
        #expect(received.count == 4)
        #expect(received[1] == [])
        #expect(received[2] == big)
        #expect(received[3] == Array("tail".utf8))
        try server.send(frames: [received[0], big])
        #expect(try client.receiveFrames() == [big])
    }

    @Test("a bind to tcp://localhost binds 127.0.0.1; the endpoint round-trips a message")
    func localhost() throws {
        let (server, client) = try pair(.router, .dealer, transport: "tcp://localhost:*")
        #expect(try server.lastEndpoint().hasPrefix("tcp://127.0.0.1:"))
        try client.send(frames: [Array("hi".utf8)])
        #expect(try server.receiveFrames()?.last == Array("hi".utf8))
    }

    /// True when this host's loopback has an IPv6 address.
    static let hasIPv6Loopback =
        ((try? String(contentsOfFile: "/proc/net/if_inet6", encoding: .utf8)) ?? "").contains(
            "00000000000000000000000000000001")

    @Test("tcp://[::1] binds and connects (IPv6 turned on for the socket)", .enabled(if: hasIPv6Loopback))
    func ipv6Loopback() throws {
        let (server, client) = try pair(.router, .dealer, transport: "tcp://[::1]:*")
        #expect(try server.lastEndpoint().hasPrefix("tcp://[::1]:"))
        try client.send(frames: [Array("hi".utf8)])
        #expect(try server.receiveFrames()?.last == Array("hi".utf8))
    }

    @Test("a message still held is untouched by the next receive")
    func heldFramesSurviveTheNextReceive() throws {
        let (server, client) = try pair(.router, .dealer, transport: "inproc://held")
        try client.send(frames: [Array("one".utf8), Array("two".utf8)])
        try client.send(frames: [Array("three".utf8)])
        let first = try #require(try server.receiveFrames())
        let second = try #require(try server.receiveFrames())
        #expect(Array(first.dropFirst()) == [Array("one".utf8), Array("two".utf8)])
        #expect(Array(second.dropFirst()) == [Array("three".utf8)])
        #expect(try server.receiveFrames(dontWait: true) == nil)
        #expect(first.count == 3 && second.count == 2)
        try client.send(frames: [Array("four".utf8)])
        let third = try #require(try server.receiveFrames())
        #expect(Array(third.dropFirst()) == [Array("four".utf8)])
    }

    @Test("non-blocking receive returns nil instead of failing")
    func againIsAValue() throws {
        let (server, _) = try pair(.router, .dealer, transport: "inproc://again")
        #expect(try server.receiveFrames(dontWait: true) == nil)
        #expect(try server.receiveMessage(dontWait: true) == nil)
    }

    @Test("the last endpoint resolves a wildcard tcp port")
    func lastEndpoint() throws {
        let socket = try ZMQSocket(context, type: .router)
        try socket.bind("tcp://127.0.0.1:*")
        let endpoint = try socket.lastEndpoint()
        #expect(endpoint.hasPrefix("tcp://127.0.0.1:"))
        #expect(Int(endpoint.split(separator: ":").last!)! > 0)
    }

    @Test("errors carry errno, the operation and zmq_strerror")
    func errorsAreDescriptive() throws {
        let socket = try ZMQSocket(context, type: .router)
        let error = try #require(throws: ZeroMQError.self) { try socket.bind("nonsense://x") }
        #expect(error.code != 0)
        #expect(error.operation == "zmq_bind(nonsense://x)")
        #expect(error.description.contains(error.message))
        socket.close()
        #expect(throws: ZeroMQError.self) { try socket.bind("tcp://127.0.0.1:*") }
    }

    @Test("subscriptions filter by prefix and XPUB sees them")
    func subscriptions() throws {
        let publisher = try ZMQSocket(context, type: .xpub)
        try publisher.set(.xpubVerbose, 1)
        try publisher.bind("inproc://bus")
        let subscriber = try ZMQSocket(context, type: .sub)
        try subscriber.connect("inproc://bus")
        try subscriber.set(.subscribe, "topic\u{0}")
        let notice = try #require(try publisher.receiveFrames())
        #expect(notice == [[1] + Array("topic\u{0}".utf8)])
        try publisher.send(frames: [Array("topicLonger\u{0}".utf8), [1]])
        try publisher.send(frames: [Array("topic\u{0}".utf8), [2]])
        #expect(try subscriber.receiveFrames() == [Array("topic\u{0}".utf8), [2]])
        try subscriber.set(.unsubscribe, "topic\u{0}")
        #expect(try publisher.receiveFrames() == [[0] + Array("topic\u{0}".utf8)])
    }

    @Test("integer and byte options read back what was set")
    func options() throws {
        let socket = try ZMQSocket(context, type: .dealer)
        try socket.set(.linger, 250)
        #expect(try socket.get(.linger) == 250)
        try socket.set(.sendHighWaterMark, 5000)
        #expect(try socket.get(.sendHighWaterMark) == 5000)
        try socket.set(.maxMessageSize, 1 << 33)
        #expect(try socket.get(.maxMessageSize) == 1 << 33)
        try socket.set(.routingID, "worker-1")
        #expect(try socket.get(.routingID) == Array("worker-1".utf8))
    }

    @Test("a routed ROUTER send to a gone peer fails with EHOSTUNREACH when mandatory")
    func routerMandatory() throws {
        let router = try ZMQSocket(context, type: .router)
        try router.set(.routerMandatory, 1)
        try router.bind("inproc://mandatory")
        let error = try #require(throws: ZeroMQError.self) {
            try router.send(frames: [Array("nobody".utf8), [1]], dontWait: true)
        }
        #expect(error.code == EHOSTUNREACH)
    }

    @Test("the poller reports which socket is readable and times out")
    func poller() throws {
        let (server, client) = try pair(.pair, .pair, transport: "inproc://poll")
        var poller = ZMQPoller()
        let serverIndex = poller.add(server)
        let clientIndex = poller.add(client)
        #expect(try poller.poll(timeoutMilliseconds: 10) == 0)
        try client.send(frames: [[7]])
        #expect(try poller.poll(timeoutMilliseconds: 1000) == 1)
        #expect(poller.isReadable(serverIndex))
        #expect(!poller.isReadable(clientIndex))
    }

    @Test("a message sent from a ZMQMessage is received without loss")
    func zeroCopyMessage() throws {
        let (server, client) = try pair(.pair, .pair, transport: "inproc://msg")
        let message = try ZMQMessage(Array("hello".utf8))
        #expect(message.count == 5)
        try client.send(message)
        #expect(message.count == 0)
        let received = try #require(try server.receiveMessage())
        #expect(received.bytes == Array("hello".utf8))
        #expect(!received.hasMore)
    }

    @Test("a multipart holder reads the frames in place, reused message after message")
    func multipartInPlace() throws {
        let (server, client) = try pair(.pull, .push, transport: "inproc://multipart")
        let message = ZMQMultipart(capacity: 4)
        #expect(try server.receive(into: message, dontWait: true) == false)
        #expect(message.count == 0)
        try client.send(frames: [Array("topic".utf8), [], Array(repeating: 7, count: 300), Array("end".utf8)])
        try client.send(frames: [Array("second".utf8)])
        #expect(try server.receive(into: message))
        #expect(message.count == 4)
        #expect(Array(message[0]) == Array("topic".utf8))
        #expect(message[1].count == 0)
        #expect(Array(message[2]) == Array(repeating: 7, count: 300))
        #expect(Array(message[3]) == Array("end".utf8))
        #expect(try server.receive(into: message, dontWait: true))
        #expect(message.count == 1 && Array(message[0]) == Array("second".utf8))
        message.release()
        #expect(message.count == 0)
        #expect(try server.receive(into: message, dontWait: true) == false)
    }

    @Test("a message longer than the holder is received whole: its count says so, the rest is dropped")
    func multipartOverflow() throws {
        let (server, client) = try pair(.pull, .push, transport: "inproc://multipart-overflow")
        let message = ZMQMultipart(capacity: 2)
        try client.send(frames: (0..<7).map { [UInt8($0)] })
        try client.send(frames: [Array("next".utf8)])
        #expect(try server.receive(into: message))
        #expect(message.count == 7)
        #expect(Array(message[0]) == [0] && Array(message[1]) == [1])
        #expect(try server.receive(into: message))
        #expect(message.count == 1 && Array(message[0]) == Array("next".utf8))
        let closed = try ZMQSocket(context, type: .pull)
        closed.close()
        #expect(throws: ZeroMQError.self) { try closed.receive(into: message) }
    }

    @Test("a message read in place has the frames a copying receive gives, whatever their number and sizes")
    func multipartAgainstCopies() throws {
        let (server, client) = try pair(.pull, .push, transport: "inproc://multipart-differential")
        let message = ZMQMultipart(capacity: 4)
        // A fixed-seed walk over the shapes: 1–9 frames, empty to 70 KB, bytes of every value.
        var state: UInt64 = 0x5EED
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        for round in 0..<200 {
            let sizes = [0, 1, 7, 300, 5_000, 70_000]
            let frames = (0..<(1 + next(9))).map { _ in
                var frame = [UInt8](repeating: UInt8(next(256)), count: sizes[next(sizes.count)])
                if !frame.isEmpty { frame[next(frame.count)] = UInt8(next(256)) }
                return frame
            }
            try client.send(frames: frames)
            try client.send(frames: frames)
            let copied = try server.receiveFrames()
            #expect(try server.receive(into: message))
            #expect(copied == frames && message.count == frames.count, "round \(round)")
            for index in 0..<min(message.count, message.capacity) {
                #expect(Array(message[index]) == frames[index], "round \(round), frame \(index)")
            }
            message.release()
        }
    }
}

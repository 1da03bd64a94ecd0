import Foundation
import ZeroMQ

/// A bare DEALER speaking (or failing to speak) the protocol, for bad-input tests.
enum RawPeer {
    static let garbage: [[[UInt8]]] = [
        [(0..<64).map { _ in UInt8.random(in: 0...255) }],
        [Array("LLC02".utf8), Array("HELLO".utf8), Array("1".utf8), []],
        [Array("LLC01".utf8), Array("EXPLODE".utf8), Array("2".utf8), []],
        [Array("LLC01".utf8), Array("LOOKUP".utf8)],
        [Array("LLC01".utf8), Array("LOOKUP".utf8), Array("3".utf8), Array("{not json".utf8)],
        [
            Array("LLC01".utf8), Array("PUBLISH".utf8), Array("4".utf8), Array(#"{"event":"openURL"}"#.utf8),
            Array("{}".utf8), [1],
        ],
        [
            Array("LLC01".utf8), Array("PUBLISH".utf8), Array("5".utf8), Array(#"{"event":"x.y"}"#.utf8),
            [UInt8](repeating: 0x20, count: 9 << 20),
        ],
        [Array("LLC01".utf8), Array("REGISTER".utf8), Array("6".utf8), Array(#"{"name":"a b"}"#.utf8)],
    ]

    /// Sends each message and collects one reply per message (5 s each at most).
    static func exchange(
        with endpoint: String, messages: [[[UInt8]]], curve: (keys: CurveKeyPair, server: String)? = nil
    ) throws -> [[[UInt8]]] {
        let socket = try ZMQSocket(ZMQContext.shared, type: .dealer)
        if let curve { try socket.secureAsClient(curve.keys, serverKey: curve.server) }
        try socket.connect(endpoint)
        var replies: [[[UInt8]]] = []
        for message in messages {
            // A broker that refused the handshake leaves no connection to queue on: no reply.
            var writable = ZMQPoller()
            writable.add(socket, events: .writable)
            _ = try writable.poll(timeoutMilliseconds: 1000)
            guard try socket.send(frames: message, dontWait: true) else {
                replies.append([])
                continue
            }
            var poller = ZMQPoller()
            poller.add(socket)
            guard try poller.poll(timeoutMilliseconds: 5000) > 0,
                let reply = try socket.receiveFrames(dontWait: true)
            else {
                replies.append([])
                continue
            }
            replies.append(reply)
        }
        return replies
    }

    /// Sends `messages` that get no reply, then `question`, on one DEALER; returns the answer to
    /// `question` (which, arriving after them, shows the broker has read them all).
    static func send(_ messages: [[[UInt8]]], thenAsk question: [[UInt8]], to endpoint: String) throws
        -> [[UInt8]]
    {
        let socket = try ZMQSocket(ZMQContext.shared, type: .dealer)
        try socket.connect(endpoint)
        for message in messages { try socket.send(frames: message) }
        try socket.send(frames: question)
        var poller = ZMQPoller()
        poller.add(socket)
        guard try poller.poll(timeoutMilliseconds: 5000) > 0,
            let reply = try socket.receiveFrames(dontWait: true)
        else { return [] }
        return reply
    }
}

/// Runs blocking work (a raw socket's polls) on a thread of its own, not on the Swift concurrency
/// pool, whose two threads the other tests of the run share.
enum OffPool {
    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try body() }) }
            thread.start()
        }
    }
}

import Lifeline
import LifelineSupport
import ZeroMQ

/// The peers' subscriber and responder processes, which ack to the driver like the raw libzmq
/// subscribers: each message's payload is the Lifeline events' JSON, its key and quiet flag read as a
/// Lifeline handler reads them (``Payload/fields(_:)``).
enum PeerRoles {
    /// Subscribes to `--topics` on the NATS server `--server` and acks every message.
    static func natsSubscriber(_ arguments: inout CommandLineArguments) throws -> Never {
        let index = UInt32(try arguments.integer(BenchOptions.index, in: 0...10_000) ?? 0)
        let nats = try NATSConnection(try arguments.option(BenchOptions.server) ?? "")
        for (sid, topic) in (try arguments.option(BenchOptions.topics) ?? "").split(separator: ",")
            .enumerated()
        {
            nats.subscribe(String(topic), sid: sid + 1)
        }
        try nats.ping()
        let acks = try ackSocket(try arguments.option(BenchOptions.ack) ?? "")
        Console.out("READY subscriber=\(index)")
        var count: UInt64 = 0
        while true {
            let message = try nats.next()
            let received = SystemClock.monotonicNanoseconds()
            count += 1
            let (key, quiet) = Payload.fields(message.payload)
            guard !quiet else { continue }
            try acks.send(frames: [Ack(index: index, key: key, received: received, count: count).encoded()])
        }
    }

    /// Subscribes to the channels `--topics` on the Redis server `--server` and acks every message.
    static func redisSubscriber(_ arguments: inout CommandLineArguments) throws -> Never {
        let index = UInt32(try arguments.integer(BenchOptions.index, in: 0...10_000) ?? 0)
        let redis = try RedisConnection(try arguments.option(BenchOptions.server) ?? "")
        let channels = (try arguments.option(BenchOptions.topics) ?? "").split(separator: ",")
        redis.command([Array("SUBSCRIBE".utf8)] + channels.map { Array($0.utf8) })
        try redis.flush()
        for _ in channels { _ = try redis.next() }
        let acks = try ackSocket(try arguments.option(BenchOptions.ack) ?? "")
        Console.out("READY subscriber=\(index)")
        var count: UInt64 = 0
        while true {
            guard case .array(let push) = try redis.next(), push.count == 3,
                case .bulk(let payload?) = push[2]
            else { continue }
            let received = SystemClock.monotonicNanoseconds()
            count += 1
            let (key, quiet) = Payload.fields(payload)
            guard !quiet else { continue }
            try acks.send(frames: [Ack(index: index, key: key, received: received, count: count).encoded()])
        }
    }

    /// Answers every request on `bench.echo` with its own payload (NATS request/reply).
    static func natsResponder(_ arguments: inout CommandLineArguments) throws -> Never {
        let nats = try NATSConnection(try arguments.option(BenchOptions.server) ?? "")
        nats.subscribe("bench.echo", sid: 1)
        try nats.ping()
        Console.out("READY responder")
        while true {
            let message = try nats.next()
            guard let reply = message.reply else { continue }
            nats.publish(reply, message.payload)
            try nats.flush()
        }
    }

    private static func ackSocket(_ endpoint: String) throws -> ZMQSocket {
        let push = try ZMQSocket(ZMQContext.shared, type: .push)
        try push.set(.sendHighWaterMark, 0)
        try push.connect(endpoint)
        return push
    }
}

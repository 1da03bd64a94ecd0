import Foundation
import Lifeline
import LifelineProtocol
import LifelineSupport
import ZeroMQ

/// A publisher of the guaranteed tier: it sends events that the system persists before it
/// acknowledges them, and reads those acknowledgements in order. Writes collect until ``flush()``.
protocol DurablePublisher: AnyObject {
    /// Queues one 64-byte event carrying `key`, asking for the system's acknowledgement.
    func send(_ key: UInt64) throws
    /// Sends what was queued.
    func flush() throws
    /// Waits (at most 10 s) for the acknowledgement of the oldest publish in flight.
    /// - Throws: ``BenchError`` when the system refused it or said nothing.
    func receiveAcknowledgement() throws
}

/// PUBLISH to a broker with a state directory, one event each: answered 200 once the event is in the
/// broker's journal (written to the OS, not synced).
final class LifelinePublisher: DurablePublisher {
    private let socket: ZMQSocket
    private let header = JSONWriter.encode(["event": .string(DurableConsumers.subject)])
    private let version = Array(ProtocolID.control.utf8)
    private let command = Array(Command.publish.rawValue.utf8)

    /// A DEALER connected to the broker's control endpoint.
    /// - Throws: ``ZeroMQError`` when the socket cannot be made.
    init(broker: String) throws {
        socket = try ZMQSocket(ZMQContext.shared, type: .dealer)
        try socket.set(.sendHighWaterMark, 0)
        try socket.set(.receiveHighWaterMark, 0)
        try socket.set(.receiveTimeout, 10_000)
        try socket.connect(broker)
    }

    func send(_ key: UInt64) throws {
        try socket.send(frames: [version, command, [], header, Payload.json(key: key, size: 64)])
    }

    func flush() throws {}

    func receiveAcknowledgement() throws {
        guard let frames = try socket.receiveFrames() else {
            throw BenchError("lifeline: no receipt within 10 s")
        }
        guard frames.count == 5, frames[3].first == UInt8(ascii: "2") else {
            throw BenchError(
                "lifeline: PUBLISH refused: \(String(decoding: frames.last ?? [], as: UTF8.self))")
        }
    }
}

/// A PUB to the stream's subject with a reply subject: JetStream answers with a PubAck once the
/// message is stored (file storage, one replica).
final class JetStreamPublisher: DurablePublisher {
    private let nats: NATSConnection
    private let subject = Array(DurableConsumers.subject.utf8)
    private static let inbox = "_INBOX.jsbench"

    /// Connects, creates the stream (`replicas` copies: 3 on a cluster) and its durable push
    /// consumer (explicit acks, redelivered 2 s after a delivery that was not acked).
    /// - Throws: ``BenchError`` when the server refuses either.
    init(server: String, replicas: Int = 1) throws {
        nats = try NATSConnection(server)
        // A request nobody answers (a cluster still electing) must not block the run.
        nats.limitReads(toSeconds: 10)
        nats.subscribe("\(Self.inbox).>", sid: 1)
        try request(
            "$JS.API.STREAM.CREATE.\(DurableConsumers.stream)",
            #"{"name":"\#(DurableConsumers.stream)","subjects":["\#(DurableConsumers.subject)"],"storage":"file","num_replicas":\#(replicas),"retention":"limits"}"#
        )
        try request(
            "$JS.API.CONSUMER.DURABLE.CREATE.\(DurableConsumers.stream).\(DurableConsumers.durable)",
            #"{"stream_name":"\#(DurableConsumers.stream)","config":{"durable_name":"\#(DurableConsumers.durable)","deliver_subject":"\#(DurableConsumers.deliverSubject)","ack_policy":"explicit","ack_wait":2000000000,"max_ack_pending":100000,"deliver_policy":"all","max_deliver":-1}}"#
        )
    }

    private func request(_ subject: String, _ body: String) throws {
        nats.publish(Array(subject.utf8), Array(body.utf8), reply: Array("\(Self.inbox).setup".utf8))
        try nats.flush()
        let answer = String(decoding: try nats.next().payload, as: UTF8.self)
        if answer.contains("\"error\"") { throw BenchError("jetstream: \(subject): \(answer)") }
    }

    func send(_ key: UInt64) throws {
        nats.publish(subject, Payload.json(key: key, size: 64), reply: Array("\(Self.inbox).\(key)".utf8))
    }

    func flush() throws { try nats.flush() }

    func receiveAcknowledgement() throws {
        let answer = try nats.next().payload
        guard !answer.isEmpty, !answer.starts(with: Array(#"{"error""#.utf8)),
            answer.firstRange(of: Array(#""seq""#.utf8)) != nil
        else { throw BenchError("jetstream: publish refused: \(String(decoding: answer, as: UTF8.self))") }
    }
}

/// XADD to the stream, to a server with `appendonly yes` and `appendfsync everysec`: Redis writes the
/// append-only file before it sends the entry's id.
final class RedisStreamPublisher: DurablePublisher {
    private let redis: RedisConnection
    private let parts = ["XADD", DurableConsumers.subject, "*", "p"].map { Array($0.utf8) }

    /// Connects and creates the consumer group (and the stream).
    /// - Throws: ``BenchError`` when the server refuses.
    init(server: String) throws {
        redis = try RedisConnection(server)
        redis.limitReads(toSeconds: 10)
        redis.command(
            ["XGROUP", "CREATE", DurableConsumers.subject, DurableConsumers.group, "$", "MKSTREAM"].map {
                Array($0.utf8)
            })
        try redis.flush()
        _ = try redis.next()
    }

    func send(_ key: UInt64) throws { redis.command(parts + [Payload.json(key: key, size: 64)]) }

    func flush() throws { try redis.flush() }

    func receiveAcknowledgement() throws {
        guard case .bulk(_?) = try redis.next() else {
            throw BenchError("redis: XADD answered without an id")
        }
    }
}

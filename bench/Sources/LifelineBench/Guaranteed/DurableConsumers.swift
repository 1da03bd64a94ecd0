import Foundation
import Lifeline
import LifelineProtocol
import LifelineSupport
import ZeroMQ

/// The consumers of the guaranteed tier, each a process of its own: it records every event it is
/// given (``HandledRecord``), then acknowledges it the way its system asks — Lifeline's records the
/// event's cursor with it and resumes from the last one; JetStream's acks each message; Redis's
/// XACKs each batch it read — and reports it to the driver (an ``Ack``).
enum DurableConsumers {
    /// The event the guaranteed tier publishes (a Lifeline event, a JetStream subject, a Redis stream).
    static let subject = "bench.durable"
    /// The JetStream stream, its durable consumer and the subject it delivers to.
    static let stream = "BENCH"
    static let durable = "worker"
    static let deliverSubject = "bench.deliver"
    /// The Redis consumer group, and the consumer's name (the same after a restart: it reads what it
    /// was given and did not acknowledge first).
    static let group = "bench"
    static let consumerName = "c1"

    /// A Lifeline service handling `bench.durable` the default way (in order, on its handler thread),
    /// resuming from the cursor of the record's last line.
    static func lifeline(_ arguments: CommandLineArguments) async -> Never {
        var arguments = arguments
        let (index, endpoint, path): (UInt32, String, String)
        let record: HandledRecord
        do {
            index = UInt32(try arguments.integer(BenchOptions.index, in: 0...10_000) ?? 0)
            endpoint = try arguments.option(BenchOptions.ack) ?? ""
            path = try arguments.option(BenchOptions.record) ?? ""
            record = try HandledRecord(path: path)
        } catch {
            Console.error("lifeline-bench lifeline-consumer: \(error)")
            exit(2)
        }
        let acks = AckSender(endpoint: endpoint)
        let counter = Counter()
        let sendable = UncheckedRecord(record: record)
        await Service("bench-durable")
            .on(EventName(rawValue: subject)) { event in
                let key = UInt64(event["k"]?.intValue ?? 0)
                sendable.record.append("\(event.cursor) \(key)\n")
                acks.send(
                    Ack(
                        index: index, key: key, received: SystemClock.monotonicNanoseconds(),
                        count: counter.increment()))
            }
            .resume {
                HandledRecord.lines(at: path).last.flatMap { EventCursor(String($0.prefix { $0 != " " })) }
            }
            .main(arguments: arguments)
    }

    /// The record, used by one handler at a time (Lifeline runs a service's handlers in order).
    private struct UncheckedRecord: @unchecked Sendable { let record: HandledRecord }

    /// A JetStream push consumer: reads the durable consumer's deliveries, records each and acks it.
    static func jetstream(_ arguments: inout CommandLineArguments) throws -> Never {
        let index = UInt32(try arguments.integer(BenchOptions.index, in: 0...10_000) ?? 0)
        let nats = try NATSConnection(try arguments.option(BenchOptions.server) ?? "")
        let record = try HandledRecord(path: try arguments.option(BenchOptions.record) ?? "")
        let acks = try ackSocket(try arguments.option(BenchOptions.ack) ?? "")
        nats.subscribe(deliverSubject, sid: 1)
        try nats.ping()
        Console.out("READY consumer=\(index)")
        var count: UInt64 = 0
        while true {
            let message = try nats.next()
            guard let reply = message.reply else { continue }
            let key = Payload.fields(message.payload).key
            record.append("\(key)\n")
            nats.publish(reply, [])  // an empty message to the reply subject acks it
            count += 1
            try acks.send(frames: [
                Ack(index: index, key: key, received: SystemClock.monotonicNanoseconds(), count: count)
                    .encoded()
            ])
            try nats.flush()  // each ack leaves at once: a held one would be redelivered after ack_wait
        }
    }

    /// A Redis Streams consumer in the group: reads what it was given and did not acknowledge (after
    /// a restart), then new entries, in batches; records each entry and XACKs the batch.
    static func redis(_ arguments: inout CommandLineArguments) throws -> Never {
        let index = UInt32(try arguments.integer(BenchOptions.index, in: 0...10_000) ?? 0)
        let redis = try RedisConnection(try arguments.option(BenchOptions.server) ?? "")
        let record = try HandledRecord(path: try arguments.option(BenchOptions.record) ?? "")
        let acks = try ackSocket(try arguments.option(BenchOptions.ack) ?? "")
        Console.out("READY consumer=\(index)")
        var count: UInt64 = 0
        var ownPending = true
        while true {
            var command = ["XREADGROUP", "GROUP", group, consumerName, "COUNT", "512"]
            if !ownPending { command += ["BLOCK", "1000"] }
            command += ["STREAMS", subject, ownPending ? "0" : ">"]
            redis.command(command.map { Array($0.utf8) })
            try redis.flush()
            let entries = streamEntries(try redis.next())
            if entries.isEmpty {
                ownPending = false
                continue
            }
            for (_, payload) in entries {
                let key = Payload.fields(payload).key
                record.append("\(key)\n")
                count += 1
                try acks.send(frames: [
                    Ack(index: index, key: key, received: SystemClock.monotonicNanoseconds(), count: count)
                        .encoded()
                ])
            }
            redis.command([Array("XACK".utf8), Array(subject.utf8), Array(group.utf8)] + entries.map(\.id))
            try redis.flush()
            _ = try redis.next()
        }
    }

    /// The (id, payload) of each entry of an XREADGROUP reply; an entry whose fields are gone (it was
    /// deleted) is left out.
    static func streamEntries(_ reply: RedisConnection.Reply) -> [(id: [UInt8], payload: [UInt8])] {
        guard case .array(let streams) = reply, case .array(let stream)? = streams.first, stream.count == 2,
            case .array(let entries) = stream[1]
        else { return [] }
        return entries.compactMap { entry in
            guard case .array(let parts) = entry, parts.count == 2, case .bulk(let id?) = parts[0],
                case .array(let fields) = parts[1], fields.count == 2, case .bulk(let payload?) = fields[1]
            else { return nil }
            return (id, payload)
        }
    }

    private static func ackSocket(_ endpoint: String) throws -> ZMQSocket {
        let push = try ZMQSocket(ZMQContext.shared, type: .push)
        try push.set(.sendHighWaterMark, 0)
        try push.connect(endpoint)
        return push
    }
}

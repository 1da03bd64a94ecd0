import Foundation
import Lifeline
import LifelineProtocol
import LifelineSupport
import Synchronization
import ZeroMQ

/// The processes the driver starts: each prints `READY ...` when it is serving.
enum Roles {
    /// A Lifeline service that acks every benchmark event it handles, and answers `echo`: the
    /// `--events` and `echo` inline, on the socket thread (the opt-in a user after speed takes), the
    /// `--pool-events` and `echo-pool` the default way, on the Swift pool.
    static func service(_ arguments: CommandLineArguments) async -> Never {
        var arguments = arguments
        if arguments.flag(BenchOptions.keyed) {
            await Service("bench-keyed").actors { _, context in EchoActor(actorSystem: context.actorSystem) }
                .main(arguments: arguments)
        }
        let (index, endpoint, topics, poolTopics, typedTopics, skeletonTopics):
            (UInt32, String, [EventName], [EventName], [EventName], [EventName])
        do {
            index = UInt32(try arguments.integer(BenchOptions.index, in: 0...10_000) ?? 0)
            endpoint = try arguments.option(BenchOptions.ack) ?? ""
            topics = (try arguments.option(BenchOptions.events) ?? "").split(separator: ",").map {
                EventName(rawValue: String($0))
            }
            poolTopics = (try arguments.option(BenchOptions.poolEvents) ?? "").split(separator: ",").map {
                EventName(rawValue: String($0))
            }
            typedTopics = (try arguments.option(BenchOptions.typedEvents) ?? "").split(separator: ",").map {
                EventName(rawValue: String($0))
            }
            skeletonTopics = (try arguments.option(BenchOptions.skeletonEvents) ?? "").split(separator: ",")
                .map { EventName(rawValue: String($0)) }
        } catch {
            Console.error("lifeline-bench service: \(error)")
            exit(2)
        }
        let ack = AckSender(endpoint: endpoint)
        let counter = Counter()
        @Sendable func handle(_ event: Event) {
            settle(key: UInt64(event["k"]?.intValue ?? 0), quiet: event["q"] != nil, event)
        }
        @Sendable func settle(key: UInt64, quiet: Bool, _ event: Event) {
            let received = SystemClock.monotonicNanoseconds()
            let count = counter.increment()
            if !quiet {
                ack.send(
                    Ack(
                        index: index, key: key, received: received, count: count,
                        published: event.publishedMonotonic, socketReceived: event.receivedMonotonic))
            }
        }
        var service = Service("bench-\(index)")
        for topic in topics { service = service.onInline(topic, perform: handle) }
        // The untyped handler reads the fields the typed one decodes (k, q and the text of p): the
        // typed rows are compared with the same work per event.
        for topic in poolTopics {
            service = service.on(topic) { event in
                let text = event["p"]?.stringValue
                settle(key: UInt64(event["k"]?.intValue ?? 0), quiet: event["q"] != nil && text != nil, event)
            }
        }
        // The pool row's reads plus what any `Decodable` type costs before a decoder reads a byte:
        // the typed rows' floor (bench/typed-cpu.sh).
        for topic in skeletonTopics {
            service = service.on(topic) { event in
                let text = event["p"]?.stringValue
                let nothing = try TypedN1(from: SilentDecoder())
                settle(
                    key: UInt64(event["k"]?.intValue ?? 0) + nothing.k,
                    quiet: event["q"] != nil && text != nil, event)
            }
        }
        service = service.typed(typedTopics, settle)
        await service.methodInline("echo") { $0.body }.method("echo-pool") { $0.body }
            .method("echo-typed") { (body: EchoBody, _) async throws -> EchoBody in body }
            .actor { EchoActor(actorSystem: $0.actorSystem) }
            .main(arguments: arguments)
    }

    /// libzmq's `zmq_proxy` between two bound sockets: XSUB/XPUB (`--kind pubsub`) or ROUTER/DEALER.
    static func proxy(_ arguments: inout CommandLineArguments) throws -> Never {
        let kind = try arguments.option(BenchOptions.kind) ?? "pubsub"
        let context = ZMQContext.shared
        let frontend = try ZMQSocket(context, type: kind == "pubsub" ? .xsub : .router)
        let backend = try ZMQSocket(context, type: kind == "pubsub" ? .xpub : .dealer)
        for socket in [frontend, backend] {
            try socket.set(.sendHighWaterMark, 0)
            try socket.set(.receiveHighWaterMark, 0)
        }
        try frontend.bind(try arguments.option(BenchOptions.frontend) ?? "tcp://127.0.0.1:*")
        try backend.bind(try arguments.option(BenchOptions.backend) ?? "tcp://127.0.0.1:*")
        Console.out("READY frontend=\(try frontend.lastEndpoint()) backend=\(try backend.lastEndpoint())")
        Console.error("proxy stopped: \(ZMQProxy.run(frontend: frontend, backend: backend))")
        exit(1)
    }

    /// A raw SUB: subscribes to `--topics` on every `--connect` endpoint and acks each message.
    /// Frame 1 starts with the event key (u64, big-endian).
    static func subscriber(_ arguments: inout CommandLineArguments) throws -> Never {
        let index = UInt32(try arguments.integer(BenchOptions.index, in: 0...10_000) ?? 0)
        let context = ZMQContext.shared
        let sub = try ZMQSocket(context, type: .sub)
        try sub.set(.receiveHighWaterMark, 0)
        for endpoint in (try arguments.option(BenchOptions.connect) ?? "").split(separator: ",") {
            try sub.connect(String(endpoint))
        }
        for topic in (try arguments.option(BenchOptions.topics) ?? "").split(separator: ",") {
            try sub.set(.subscribe, Array(topic.utf8) + [0])
        }
        let push = try ZMQSocket(context, type: .push)
        try push.set(.sendHighWaterMark, 0)
        try push.connect(try arguments.option(BenchOptions.ack) ?? "")
        Console.out("READY subscriber=\(index)")
        var count: UInt64 = 0
        while true {
            guard let frames = try sub.receiveFrames() else { continue }
            let received = SystemClock.monotonicNanoseconds()
            count += 1
            guard frames.count > 1 else { continue }
            let (key, quiet) = Payload.fields(frames[1])
            guard !quiet else { continue }
            try push.send(frames: [Ack(index: index, key: key, received: received, count: count).encoded()])
        }
    }

    /// A ROUTER that sends every message straight back (direct request/reply baseline).
    static func echo(_ arguments: inout CommandLineArguments) throws -> Never {
        let router = try ZMQSocket(ZMQContext.shared, type: .router)
        try router.bind(try arguments.option(BenchOptions.bind) ?? "tcp://127.0.0.1:*")
        Console.out("READY echo=\(try router.lastEndpoint())")
        while true {
            if let frames = try router.receiveFrames() { try router.send(frames: frames) }
        }
    }

    /// A DEALER worker behind a ROUTER/DEALER proxy that echoes each request (envelope kept).
    static func worker(_ arguments: inout CommandLineArguments) throws -> Never {
        let dealer = try ZMQSocket(ZMQContext.shared, type: .dealer)
        try dealer.connect(try arguments.option(BenchOptions.connect) ?? "")
        Console.out("READY worker")
        while true {
            if let frames = try dealer.receiveFrames() { try dealer.send(frames: frames) }
        }
    }
}

/// Events a bench service has handled (handlers run one at a time, but the counter is shared safely).
final class Counter: Sendable {
    private let value = Mutex<UInt64>(0)
    func increment() -> UInt64 {
        value.withLock {
            $0 += 1; return $0
        }
    }
}

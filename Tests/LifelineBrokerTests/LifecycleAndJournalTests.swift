import LifelineProtocol
import TestSupport
import Testing

@testable import LifelineBroker

@Suite("Lifecycle state, journal, replay", .timeLimit(.minutes(1)))
struct LifecycleAndJournalTests {
    @Test("the lifecycle moves with the events and refuses ones that make no sense")
    func lifecycleMachine() {
        var state = LifecycleState.notRunning
        for (event, next) in [
            (EventName.didFinishLaunching, LifecycleState.launching), (.didBecomeActive, .active),
            (.willResignActive, .inactive),
            (.didEnterBackground, .background), (.willEnterForeground, .inactive),
            (.didBecomeActive, .active),
            (.willTerminate, .terminating), (.didFinishLaunching, .launching),
        ] {
            guard case .success(let moved) = state.applying(event) else {
                Issue.record("\(event) refused in \(state)")
                return
            }
            #expect(moved == next)
            state = next
        }
        #expect(state.applying(.openURL) == .success(nil))
        guard case .failure(let error) = LifecycleState.background.applying(.didBecomeActive) else {
            Issue.record("didBecomeActive accepted while background")
            return
        }
        #expect(
            error.description.hasPrefix(
                "didBecomeActive makes no sense while the application is background (it is valid while launching or inactive)"
            ))
    }

    @Test(
        "a broker with a state directory (a group's leader too) saves every lifecycle change in lifecycle.json; a broker given it goes on in that state"
    )
    func lifecycleReplicated() throws {
        let saved = { (harness: BrokerHarness) in
            harness.output.compactMap { item -> JSONValue? in
                guard case .persist("lifecycle.json", let document) = item else { return nil }
                return document
            }
        }
        var plain = BrokerHarness()
        plain.request("cli", .publish, ["event": "didFinishLaunching"])
        #expect(saved(plain).isEmpty, "a broker without a state directory does not save it")
        var broker = BrokerHarness { $0.stateDirectory = "/state" }
        broker.request("cli", .publish, ["event": "didFinishLaunching"])
        #expect(saved(broker) == [["state": "launching"]])
        broker.request("cli", .publish, ["event": "didBecomeActive"])
        #expect(saved(broker) == [["state": "active"]])
        broker.request("cli", .publish, ["event": "app.other"])
        #expect(saved(broker).isEmpty, "saved only when it changes")
        let restarted = { (lifecycle: JSONValue) in
            Broker(
                configuration: BrokerConfiguration(),
                identity: BrokerIdentity(pid: 2, host: "test", version: "test"),
                busEndpoints: ["tcp://127.0.0.1:9"],
                monotonic: broker.instant, wall: 1_700_000_100_000_000_000, lifecycle: lifecycle)
        }
        let next = restarted(["state": "active"])
        #expect(next.lifecycle == .active)
        #expect(next.startupNotes.contains("restored the application's lifecycle state: active"))
        let unknown = restarted(["state": "asleep"])
        #expect(unknown.lifecycle == .notRunning)
        #expect(unknown.startupNotes.contains("ignored the saved lifecycle state: it names no known state"))
    }

    @Test("the broker refuses an out-of-order lifecycle event with 409 unless forced, and reports the state")
    func brokerEnforcesLifecycle() throws {
        var broker = BrokerHarness()
        let early = broker.request("cli", .publish, ["event": "didBecomeActive"])
        #expect(early?.status == .conflict)
        #expect(broker.published.isEmpty)
        let step1 = broker.request("cli", .publish, ["event": "didFinishLaunching"])
        #expect(step1?.status == .ok)
        let forced = broker.request("cli", .publish, ["event": "willEnterForeground", "force": true])
        #expect(try forced?.json()["lifecycle"] == "inactive")
        let hello = broker.request("cli", .hello)
        #expect(try hello?.json()["lifecycle"] == "inactive")
    }

    @Test("the journal keeps at most its capacity and age, and knows what it still covers")
    func journalBounds() {
        var journal = EventJournal(capacity: 3, maximumAgeMilliseconds: 1000)
        func event(_ sequence: UInt64, _ name: EventName = "a.b") -> BusMessage {
            BusMessage(
                name: name,
                header: BusHeader(
                    epoch: 1, sequence: sequence, topicSequence: sequence, publishedWallNanoseconds: 0,
                    publishedMonotonicNanoseconds: 0), payload: [])
        }
        for sequence in 1...5 { journal.append(event(UInt64(sequence)), now: UInt64(sequence) * 100_000_000) }
        #expect(journal.count == 3)
        #expect(journal.firstRetainedSequence == 3)
        #expect(journal.covers(after: 2) && !journal.covers(after: 1))
        #expect(journal.events(after: 3, names: nil).map(\.header.sequence) == [4, 5])
        journal.trim(now: 1_450_000_000)
        #expect(journal.firstRetainedSequence == 5)
        #expect(journal.topics["a.b"] == EventJournal.TopicState(sequence: 5, topicSequence: 5))
    }

    @Test("a resuming service gets what it missed, in order, before the registration reply")
    func resumeReplays() throws {
        var broker = BrokerHarness()
        for index in 1...4 {
            broker.request(
                "cli", .publish, ["event": index % 2 == 0 ? "app.even" : "app.odd", "ack": false],
                payload: Array("{\"n\":\(index)}".utf8))
        }
        let epoch = broker.core.epoch
        let step2 = broker.register("svc", peer: "p", events: ["app.even"], resume: (epoch, 1))
        let reply = try #require(step2)
        let replayed = broker.requests(to: "p").filter { $0.command == .event }
        #expect(replayed.map { $0.header["sequence"]?.intValue } == [2, 4])
        #expect(replayed.map { $0.payload } == [Array("{\"n\":2}".utf8), Array("{\"n\":4}".utf8)])
        #expect(try reply.json()["replayed"] == 2)
        #expect(try reply.json()["topics"] == ["app.even": ["sequence": 4, "topicSequence": 2]])
        let order = broker.output.compactMap { item -> Command? in
            guard case .send(let peer, let frames) = item, peer == Array("p".utf8),
                case .request(let request)? = try? ControlMessage.decode(frames[...])
            else {
                if case .send(let peer, _) = item, peer == Array("p".utf8) { return .reply }
                return nil
            }
            return request.command
        }
        #expect(order == [.event, .event, .reply], "replayed events come before the reply")
    }

    @Test("a resume the journal cannot satisfy gets an explicit gap notice and the current state")
    func resumeGap() throws {
        var broker = BrokerHarness { $0.journalCapacity = 2 }
        for _ in 1...5 { broker.request("cli", .publish, ["event": "app.x"]) }
        let step3 = broker.register("late", peer: "p", events: ["app.x"], resume: (broker.core.epoch, 1))
        let trimmed = try #require(step3)
        let gap = try #require(try trimmed.json()["gap"])
        #expect(gap["reason"]?.stringValue == "the journal no longer holds events 2...3")
        #expect(broker.requests(to: "p").filter { $0.command == .event }.isEmpty)
        let step4 = broker.register("other", peer: "q", events: ["app.x"], resume: (42, 3))
        let restarted = try #require(step4)
        #expect(
            try restarted.json()["gap"]?["reason"]?.stringValue
                == "the broker restarted without a journal (epoch 42 is over): events of it after #3, if any, are gone; and the journal no longer holds events 1...4 of epoch \(broker.core.epoch)"
        )
        #expect(try restarted.json()["topics"]?["app.x"]?["topicSequence"] == 5)
        #expect(
            broker.requests(to: "q").filter { $0.command == .event }.map { $0.header["sequence"] } == [5],
            "what this epoch's journal still holds of the service's events is replayed")
    }

    @Test(
        "a cursor of an earlier epoch gets this epoch's events from its start, and a notice for the old one")
    func resumeAcrossEpochs() throws {
        var broker = BrokerHarness()
        for _ in 1...3 { broker.request("cli", .publish, ["event": "app.x"]) }
        let answer = broker.register("svc", peer: "p", events: ["app.x"], resume: (42, 9))
        let reply = try #require(answer)
        #expect(
            broker.requests(to: "p").filter { $0.command == .event }.map { $0.header["sequence"] } == [
                1, 2, 3,
            ])
        #expect(try reply.json()["replayed"] == 3)
        #expect(
            try reply.json()["gap"]?["reason"]
                == "the broker restarted without a journal (epoch 42 is over): events of it after #9, if any, are gone"
        )
    }

    @Test("REPLAY sends the journal's events of the asked names after a sequence")
    func replayCommand() throws {
        var broker = BrokerHarness()
        broker.register("svc", peer: "p", events: ["app.a"])
        for name in ["app.a", "app.b", "app.a"] { broker.request("cli", .publish, ["event": .string(name)]) }
        let reply = broker.request(
            "p", .replay, ["after": 1, "epoch": .int(Int64(broker.core.epoch)), "events": ["app.a"]])
        #expect(try reply?.json()["replayed"] == 2)
        #expect(
            broker.requests(to: "p").filter { $0.command == .event }.map { $0.header["event"] } == [
                "app.a", "app.a",
            ])
    }
}

@Suite(
    "The durable journal: a broker restarted on its state directory goes on where it was",
    .timeLimit(.minutes(1)))
struct DurableJournalTests {
    /// The journal file a broker would have written: its first rewrite, then every appended record.
    static func file(of outputs: [[BrokerOutput]]) -> [UInt8] {
        var bytes: [UInt8] = []
        for output in outputs {
            for item in output {
                switch item {
                case .rewriteJournal(let records): bytes = records
                case .record(let record): bytes += record
                default: break
                }
            }
        }
        return bytes
    }

    /// A broker with a state directory after three publications of `app.x`, and its journal file.
    static func threeEvents() -> (BrokerHarness, [UInt8]) {
        var outputs: [[BrokerOutput]] = []
        var broker = BrokerHarness { $0.stateDirectory = "/state" }
        outputs.append(broker.core.takeStartupOutput())
        for n in 1...3 {
            broker.request("cli", .publish, ["event": "app.x"], payload: Array("{\"n\":\(n)}".utf8))
            outputs.append(broker.output)
        }
        return (broker, Self.file(of: outputs))
    }

    @Test(
        "a journal damaged in the middle (an unreadable record with more after it) is not restored: a new epoch, numbers never given twice"
    )
    func damagedJournal() throws {
        let (first, written) = Self.threeEvents()
        var bytes = written
        let whole = JournalRecord.decodeAll(bytes)
        #expect(whole.records.count == 4 && whole.length == bytes.count)
        // The kind byte of the second event's record (after the topics record and the first event).
        let damagedAt = JournalRecord.decodeAll(Array(bytes)).records.prefix(2).map { $0.encoded().count }
            .reduce(0, +)
        bytes[damagedAt + 4] = 99
        var second = BrokerHarness.restarted(journal: bytes)
        #expect(second.core.epoch != first.core.epoch, "a new epoch")
        #expect(second.core.sequence == 0)
        #expect(
            second.core.startupNotes.first
                == "the journal is damaged at byte \(damagedAt) of \(bytes.count) (a whole record that cannot be read, or whose checksum does not match its bytes): it is not restored, and a new epoch begins"
        )
        _ = second.core.takeStartupOutput()
    }

    @Test(
        "each journal record carries a CRC-32C: a flipped payload byte, even in the last record, is damage (a new epoch); records without one (older journals) are still read"
    )
    func checksummedJournal() throws {
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283, "the standard check value")
        var generator = SeededGenerator(seed: 7)
        for length in [0, 1, 7, 8, 9, 15, 16, 17, 1000] {
            let data = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            var crc: UInt32 = 0xFFFF_FFFF
            for byte in data {
                crc ^= UInt32(byte)
                for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
            }
            #expect(
                CRC32C.checksum(data) == crc ^ 0xFFFF_FFFF, "eight bytes a step, as one at a time: \(length)")
            #expect(CRC32C.checksum(([0] + data)[1...]) == crc ^ 0xFFFF_FFFF, "a slice")
        }
        let (first, bytes) = Self.threeEvents()
        let records = JournalRecord.decodeAll(bytes).records
        #expect(records.count == 4)
        // The digit of the last event's payload, `{"n":3}`: the record is whole, its bytes are not.
        var flipped = bytes
        let payload = Array(#"{"n":3}"#.utf8)
        let at = try #require(
            (0...(bytes.count - payload.count)).last { Array(bytes[$0..<$0 + payload.count]) == payload })
        flipped[at + 5] = UInt8(ascii: "7")
        #expect(JournalRecord.decodeAll(flipped).records.count == 3)
        #expect(!JournalRecord.isTorn(flipped[JournalRecord.decodeAll(flipped).length...]))
        var second = BrokerHarness.restarted(journal: flipped)
        #expect(second.core.epoch != first.core.epoch && second.core.sequence == 0, "not restored")
        _ = second.core.takeStartupOutput()
        // A length word damaged to run past the end, with whole records after it: damage, not a
        // torn tail.
        var long = bytes
        long[records[0].encoded().count + 1] = 0x7F
        #expect(JournalRecord.decodeAll(long).records.count == 1)
        #expect(!JournalRecord.isTorn(long[JournalRecord.decodeAll(long).length...]))
        #expect(
            JournalRecord.isTorn(
                bytes[..<(bytes.count - 3)][
                    JournalRecord.decodeAll(Array(bytes[..<(bytes.count - 3)])).length...]))
        // The same records as a journal written before records had checksums.
        let unchecked = records.flatMap { record -> [UInt8] in
            var encoded = record.encoded()
            encoded[0] &= 0x7F
            return Array(encoded.dropLast(4))
        }
        #expect(JournalRecord.decodeAll(unchecked).records == records)
        #expect(JournalRecord.decodeAll(unchecked).length == unchecked.count)
        var third = BrokerHarness.restarted(journal: unchecked)
        #expect(third.core.epoch == first.core.epoch && third.core.sequence == 3, "restored")
        _ = third.core.takeStartupOutput()
    }

    @Test(
        "same epoch, sequences and topic sequences go on, a resume replays, a repeated publication stays once"
    )
    func restart() throws {
        var outputs: [[BrokerOutput]] = []
        var first = BrokerHarness { $0.stateDirectory = "/state" }
        outputs.append(first.core.takeStartupOutput())
        for n in 1...4 {
            first.request(
                "cli", .publish, ["event": "app.x", "publishId": .string("c.\(n)")],
                payload: Array("{\"n\":\(n)}".utf8))
            outputs.append(first.output)
        }
        let epoch = first.core.epoch
        // kill -9 in the middle of writing a fifth record
        let torn = Array(
            JournalRecord.event(
                BusMessage(
                    name: "app.x",
                    header: BusHeader(
                        epoch: epoch, sequence: 5, topicSequence: 5, publishedWallNanoseconds: 0,
                        publishedMonotonicNanoseconds: 0), payload: []), publishID: nil, subscribers: 0
            ).encoded().prefix(20))
        let bytes = Self.file(of: outputs) + torn

        var second = BrokerHarness.restarted(journal: bytes)
        #expect(second.core.epoch == epoch, "the epoch goes on")
        #expect(second.core.sequence == 4)
        #expect(
            second.core.startupNotes == [
                "dropped the last 20 byte(s) of the journal: a torn record",
                "restored 4 journal event(s); epoch \(epoch) goes on after #4",
            ])
        let rewritten = JournalRecord.decodeAll(Self.file(of: [second.core.takeStartupOutput()]))
        let written = JournalRecord.decodeAll(bytes)
        #expect(written.length == bytes.count - 20 && written.records.count == 5)
        #expect(rewritten.records.dropFirst() == written.records.dropFirst(), "the torn tail is cut off")
        #expect(
            rewritten.records.first
                == .topics(
                    ["app.x": EventJournal.TopicState(sequence: 4, topicSequence: 4)], epoch: epoch,
                    sequence: 4))

        let answer = second.register("svc", peer: "p", events: ["app.x"], resume: (epoch, 2))
        let reply = try #require(answer)
        #expect(try reply.json()["replayed"] == 2 && (try reply.json()["gap"]) == nil)
        #expect(
            second.requests(to: "p").filter { $0.command == .event }.map { $0.header["sequence"] } == [3, 4])
        let repeated = second.request("cli", .publish, ["event": "app.x", "publishId": "c.4"])
        #expect(second.published.isEmpty, "a publication the first life accepted is not published again")
        #expect(try repeated?.json()["sequence"] == 4)
        second.request("cli", .publish, ["event": "app.x"])
        let next = try #require(second.published.first)
        #expect(next.header.epoch == epoch && next.header.sequence == 6 && next.header.topicSequence == 5)
    }

    @Test("a journal whose events all aged out still keeps the epoch, the sequence and the topic positions")
    func onlyPositionsLeft() {
        let topics = JournalRecord.topics(
            ["app.x": EventJournal.TopicState(sequence: 40, topicSequence: 12)], epoch: 777, sequence: 41)
        var broker = BrokerHarness()
        broker.core = Broker(
            configuration: BrokerConfiguration(),
            identity: BrokerIdentity(pid: 2, host: "test", version: "test"),
            busEndpoints: ["tcp://127.0.0.1:9"], monotonic: broker.instant, wall: 1_700_000_100_000_000_000,
            journal: topics.encoded())
        #expect(broker.core.epoch == 777 && broker.core.sequence == 41)
        broker.request("cli", .publish, ["event": "app.x"])
        #expect(
            broker.published.first?.header.sequence == 42
                && broker.published.first?.header.topicSequence == 13)
    }

    @Test("a cursor ahead of what the broker's journal kept gets a gap notice instead of a silent stall")
    func cursorAhead() throws {
        var broker = BrokerHarness()
        broker.request("cli", .publish, ["event": "app.x"])
        let answer = broker.register("svc", peer: "p", events: ["app.x"], resume: (broker.core.epoch, 50))
        let reply = try #require(answer)
        #expect(
            try reply.json()["gap"]?["reason"]?.stringValue?.hasPrefix("the broker's journal ends at #1")
                == true)
    }
}

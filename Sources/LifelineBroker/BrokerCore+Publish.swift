import LifelineProtocol

/// PUBLISH (sequencing, lifecycle state, journal, acknowledged delivery), ACK and REPLAY.
extension BrokerCore {
    mutating func publish(
        _ request: ControlRequest, from peer: [UInt8], now: UInt64, into output: inout [BrokerOutput]
    ) {
        let id = request.requestID
        guard let text = request.header["event"]?.stringValue else {
            refuse(
                peer, ProtocolError(.badRequest, "PUBLISH needs a string 'event'", requestID: id),
                into: &output)
            return
        }
        let payloadBytes = request.payload ?? []
        let name = EventName(rawValue: text)
        if let problem = Self.publicationProblem(name, payload: payloadBytes) {
            if request.header["reply"]?.boolValue == false {
                output.append(
                    .log(
                        "refused a PUBLISH without reply from peer \(Self.describe(peer)): \(problem.message)"
                    ))
                return
            }
            send(peer, ControlReply.error(problem.status, problem.message, requestID: id), into: &output)
            return
        }
        let descriptor = EventCatalog.descriptor(for: name)
        let acknowledged = request.header["ack"]?.boolValue ?? descriptor?.requiresAcknowledgement ?? false
        let timeout: Int
        do {
            timeout =
                try integer(request, "timeoutMs", in: 1...3_600_000)
                ?? configuration.acknowledgementTimeoutMilliseconds
        } catch {
            refuse(peer, error, into: &output)
            return
        }
        guard
            moveLifecycle(
                name, force: request.header["force"]?.boolValue == true, peer: peer, requestID: id,
                into: &output)
        else { return }
        let header = publishFrames(
            name, payload: payloadBytes.isEmpty ? Array("{}".utf8) : payloadBytes,
            flags: acknowledged ? 1 : 0, now: now, into: &output)
        launched(name, payload: payloadBytes, by: "a published \(name)", now: now, into: &output)
        if acknowledged {
            let handlers = registry.handlers(of: name)
            let entry = PendingAcknowledgements.Waiting(
                client: peer, requestID: id, event: name, sequence: header.sequence, epoch: header.epoch,
                lifecycle: lifecycle, subscribers: handlers.count, deadline: deadline(now, timeout),
                timeoutMilliseconds: timeout,
                expected: Dictionary(uniqueKeysWithValues: handlers.map { ($0.registration.name, $0.peer) }))
            if handlers.isEmpty {
                replyAcknowledged(entry, into: &output)
            } else {
                acknowledgements.add(entry)
            }
            return
        }
        if request.header["reply"]?.boolValue == false { return }
        var body = JSONObjectWriter()
        body.add("epoch", Int64(header.epoch))
        body.add("event", text)
        body.add("lifecycle", lifecycle.rawValue)
        body.add("sequence", Int64(header.sequence))
        body.add("subscribers", Int64(registry.subscriberCount(of: name)))
        send(peer, ControlReply(requestID: id, status: .ok, body: body.finish()), into: &output)
    }

    /// didFinishLaunching runs the boot (with its launch options); didBecomeActive does when no boot ran.
    mutating func launched(
        _ name: EventName, payload: [UInt8], by reason: String, now: UInt64, into output: inout [BrokerOutput]
    ) {
        if name == .didFinishLaunching {
            let options = (try? JSONParser.parse(payload))?["launchOptions"] ?? .emptyObject
            _ = requestBoot(launchOptions: options, reason: reason, now: now, into: &output)
        } else if name == .didBecomeActive && boot == nil {
            _ = requestBoot(launchOptions: .emptyObject, reason: reason, now: now, into: &output)
        }
    }

    /// Applies the lifecycle transition of `name`; answers 409 and returns false when it makes no sense
    /// in the current state (unless forced).
    mutating func moveLifecycle(
        _ name: EventName, force: Bool, peer: [UInt8], requestID: [UInt8], into output: inout [BrokerOutput]
    ) -> Bool {
        switch lifecycle.applying(name) {
        case .success(let next):
            if let next { lifecycle = next }
            return true
        case .failure(let error):
            if force {
                if let next = LifecycleState.target(of: name) {
                    output.append(.log("forced \(name) while \(lifecycle.rawValue); now \(next.rawValue)"))
                    lifecycle = next
                }
                return true
            }
            send(peer, ControlReply.error(.conflict, error.description, requestID: requestID), into: &output)
            return false
        }
    }

    /// Why a client may not publish `name` with `payload`, or nil. Custom events need only a JSON
    /// object, checked without building it; catalogued events have their fields checked.
    static func publicationProblem(_ name: EventName, payload: [UInt8]) -> ProtocolError? {
        do {
            if name.isCustom {
                if let problem = EventName.syntaxProblem(in: name.rawValue) {
                    return ProtocolError(.badRequest, problem)
                }
                if payload.isEmpty { return nil }
                let type = try JSONValidator.topLevelType(of: payload)
                if type != "object" {
                    return ProtocolError(
                        .unprocessable, "the payload of \(name) must be a JSON object, not \(type)")
                }
                return nil
            }
            try EventCatalog.validatePublication(
                name, payload: payload.isEmpty ? .emptyObject : try JSONParser.parse(payload))
            return nil
        } catch let error as JSONParseError {
            return ProtocolError(.badRequest, "the payload of \(name) is not JSON: \(error)")
        } catch let error as EventValidationError {
            let status: Status =
                error.kind == .reserved
                ? .forbidden : (error.kind == .badPayload ? .unprocessable : .badRequest)
            return ProtocolError(status, error.message)
        } catch {
            return ProtocolError(.badRequest, "\(error)")
        }
    }

    /// Stamps, journals and publishes one event.
    @discardableResult
    mutating func publishFrames(
        _ name: EventName, payload: [UInt8], flags: UInt64 = 0, now: UInt64, into output: inout [BrokerOutput]
    ) -> BusHeader {
        let header = sequencer.next(name, flags: flags, wall: wall(at: now), monotonic: now)
        let message = BusMessage(name: name, header: header, payload: payload)
        journal.append(message, now: now)
        output.append(.publish(message.frames()))
        return header
    }

    mutating func publishRuntime(
        _ name: EventName, _ payload: JSONValue, now: UInt64, into output: inout [BrokerOutput]
    ) {
        publishFrames(name, payload: JSONWriter.encode(payload), now: now, into: &output)
    }

    // MARK: Acknowledgements

    mutating func acknowledge(
        _ request: ControlRequest, from peer: [UInt8], into output: inout [BrokerOutput]
    ) {
        guard let sequence = request.header["sequence"]?.intValue,
            let service = request.header["name"]?.stringValue
        else {
            output.append(
                .log("ignored an ACK without 'sequence' and 'name' from peer \(Self.describe(peer))"))
            return
        }
        if let epochValue = request.header["epoch"]?.intValue, UInt64(epochValue) != epoch { return }
        let error = request.header["error"]?.stringValue
        if let done = acknowledgements.acknowledge(
            sequence: UInt64(sequence), service: service, peer: peer, error: error)
        {
            replyAcknowledged(done, into: &output)
        }
    }

    func replyAcknowledged(_ entry: PendingAcknowledgements.Waiting, into output: inout [BrokerOutput]) {
        if !entry.missing.isEmpty {
            let who = entry.missing.map { "\($0.service) (\($0.reason))" }.joined(separator: ", ")
            output.append(.log("\(entry.event) #\(entry.sequence): not acknowledged by \(who)"))
        }
        send(
            entry.client,
            ControlReply(requestID: entry.requestID, json: PendingAcknowledgements.body(of: entry)),
            into: &output)
    }

    // MARK: Replay

    /// Why events after `sequence` of `epoch` cannot all be replayed, as a gap notice; nil when they can.
    func replayProblem(after sequence: UInt64, epoch cursorEpoch: UInt64) -> JSONValue? {
        if cursorEpoch != epoch {
            return [
                "after": .int(Int64(sequence)),
                "reason": .string("the broker restarted (epoch \(cursorEpoch) is over); its events are gone"),
                "epoch": .int(Int64(epoch)), "sequence": .int(Int64(self.sequence)),
            ]
        }
        if !journal.covers(after: sequence) {
            return [
                "after": .int(Int64(sequence)),
                "reason": .string(
                    "the journal no longer holds events \(sequence + 1)...\(journal.firstRetainedSequence - 1)"
                ),
                "epoch": .int(Int64(epoch)), "sequence": .int(Int64(self.sequence)),
            ]
        }
        return nil
    }

    /// Sends the journal's events after `sequence` named in `names` to `peer` as EVENT messages.
    func sendReplay(
        after sequence: UInt64, names: Set<EventName>, to peer: [UInt8], into output: inout [BrokerOutput]
    ) -> Int {
        let events = journal.events(after: sequence, names: names)
        for event in events { output.append(.send(peer: peer, frames: Self.eventFrames(event))) }
        return events.count
    }

    static func eventFrames(_ message: BusMessage) -> [[UInt8]] {
        let header: JSONValue = [
            "event": .string(message.name.rawValue), "sequence": .int(Int64(message.header.sequence)),
            "topicSequence": .int(Int64(message.header.topicSequence)),
            "epoch": .int(Int64(message.header.epoch)),
            "flags": .int(Int64(message.header.flags)),
            "publishedWallNs": .int(Int64(message.header.publishedWallNanoseconds)),
            "publishedMonotonicNs": .int(Int64(message.header.publishedMonotonicNanoseconds)),
        ]
        return ControlRequest(.event, header: header, payload: message.payload).frames()
    }

    mutating func replay(_ request: ControlRequest, from peer: [UInt8], into output: inout [BrokerOutput]) {
        guard let after = request.header["after"]?.intValue, after >= 0,
            let cursorEpoch = request.header["epoch"]?.intValue
        else {
            refuse(
                peer,
                ProtocolError(
                    .badRequest, "REPLAY needs integer fields 'after' and 'epoch'",
                    requestID: request.requestID), into: &output)
            return
        }
        let names = (request.header["events"]?.arrayValue ?? []).compactMap {
            $0.stringValue.map(EventName.init(rawValue:))
        }
        var body: [String: JSONValue] = [
            "sequence": .int(Int64(sequence)), "epoch": .int(Int64(epoch)), "topics": topicState(for: names),
        ]
        if let gap = replayProblem(after: UInt64(after), epoch: UInt64(cursorEpoch)) {
            body["gap"] = gap
        } else {
            body["replayed"] = .int(
                Int64(sendReplay(after: UInt64(after), names: Set(names), to: peer, into: &output)))
        }
        send(peer, ControlReply(requestID: request.requestID, json: .object(body)), into: &output)
    }
}

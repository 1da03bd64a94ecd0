import LifelineProtocol

/// DISPATCH: an event offered to its handlers in order (priority, then registration), each answering
/// continue / return / returnYES / returnNO within a deadline, with payload rewriting and completions.
///
/// - didFinishLaunching runs three phases, as mPaaS: beforeDidFinishLaunching (notify), the handle
///   chain, afterDidFinishLaunching (notify); returnYES / returnNO in the handle chain ends the launch
///   early and skips the after phase.
/// - Events with a completion (performFetch, …) are offered to all their handlers at once, and the
///   answers' completions combine by the event's ``CompletionRule``.
/// - Other events form one chain: the first answer that is not `continue` decides.
extension BrokerCore {
    mutating func startDispatch(
        _ request: ControlRequest, from peer: [UInt8], now: UInt64, into output: inout [BrokerOutput]
    ) {
        let id = request.requestID
        guard let text = request.header["event"]?.stringValue else {
            refuse(
                peer, ProtocolError(.badRequest, "DISPATCH needs a string 'event'", requestID: id),
                into: &output)
            return
        }
        let name = EventName(rawValue: text)
        let payloadBytes = request.payload ?? []
        if let problem = Self.publicationProblem(name, payload: payloadBytes) {
            send(peer, ControlReply.error(problem.status, problem.message, requestID: id), into: &output)
            return
        }
        let requestedTimeout: Int?
        do {
            requestedTimeout = try integer(request, "timeoutMs", in: 1...3_600_000)
        } catch {
            refuse(peer, error, into: &output)
            return
        }
        let payload = (try? JSONParser.parse(payloadBytes)) ?? .emptyObject
        guard
            moveLifecycle(
                name, force: request.header["force"]?.boolValue == true, peer: peer, requestID: id,
                into: &output)
        else { return }
        let descriptor = EventCatalog.descriptor(for: name)
        func phase(_ event: EventName, _ mode: Mode) -> DispatchTable.Phase {
            let steps = registry.handlers(of: event).map { entry in
                DispatchTable.Step(
                    service: entry.registration.name,
                    timeoutMilliseconds: entry.registration.deadlines[event] ?? requestedTimeout
                        ?? descriptor?.deadlineMilliseconds
                        ?? configuration.dispatchStepTimeoutMilliseconds)
            }
            return DispatchTable.Phase(event: event, mode: mode, steps: steps)
        }
        typealias Mode = DispatchTable.Mode
        let phases: [DispatchTable.Phase]
        if name == .didFinishLaunching {
            phases = [
                phase(.beforeDidFinishLaunching, .notify), phase(name, .chain),
                phase(.afterDidFinishLaunching, .notify),
            ]
        } else {
            phases = [phase(name, descriptor?.completion == nil ? .chain : .concurrent)]
        }
        let dispatchID = dispatches.newID()
        dispatches[dispatchID] = DispatchTable.Dispatch(
            id: dispatchID, client: peer, requestID: id, event: name, descriptor: descriptor, phases: phases,
            payload: payload,
            startedAt: now)
        advance(dispatchID, now: now, into: &output)
    }

    /// Offers the next step(s), or moves to the next phase, or finishes.
    private mutating func advance(_ id: UInt64, now: UInt64, into output: inout [BrokerOutput]) {
        while var dispatch = dispatches[id] {
            guard dispatch.outstanding.isEmpty else { return }
            guard dispatch.phase < dispatch.phases.count else {
                finish(dispatch, now: now, into: &output)
                return
            }
            let phase = dispatch.phases[dispatch.phase]
            let phaseOver =
                dispatch.nextStep >= phase.steps.count || (phase.mode == .chain && dispatch.decided != nil)
            if phaseOver {
                dispatch.phase += 1
                dispatch.nextStep = 0
                if dispatch.endedEarly { dispatch.phase = dispatch.phases.count }
                dispatches[id] = dispatch
                continue
            }
            let range =
                phase.mode == .concurrent
                ? dispatch.nextStep..<phase.steps.count : dispatch.nextStep..<(dispatch.nextStep + 1)
            dispatch.nextStep = range.upperBound
            dispatches[id] = dispatch
            for index in range {
                offer(dispatch, phase: dispatch.phase, step: index, now: now, into: &output)
            }
        }
    }

    private mutating func offer(
        _ dispatch: DispatchTable.Dispatch, phase: Int, step: Int, now: UInt64,
        into output: inout [BrokerOutput]
    ) {
        let phaseInfo = dispatch.phases[phase]
        let target = phaseInfo.steps[step]
        guard let entry = registry.entry(named: target.service) else {
            record(
                dispatch.id, phase: phase, service: target.service, status: "gone", answer: nil,
                error: "not registered any more", duration: 0)
            return
        }
        let offerID = dispatches.addOffer(
            DispatchTable.Offer(
                dispatch: dispatch.id, phase: phase, step: step, service: target.service, peer: entry.peer,
                startedAt: now,
                deadline: deadline(now, target.timeoutMilliseconds)))
        var header: [String: JSONValue] = [
            "event": .string(phaseInfo.event.rawValue), "dispatch": .int(Int64(dispatch.id)),
            "step": .int(Int64(step)),
            "timeoutMs": .int(Int64(target.timeoutMilliseconds)), "mode": .string(phaseInfo.mode.rawValue),
        ]
        if let rule = dispatch.descriptor?.completion { header["completion"] = .string(rule.rawValue) }
        let request = ControlRequest(
            .offer, requestID: offerID, header: .object(header), payload: JSONWriter.encode(dispatch.payload))
        output.append(.send(peer: entry.peer, frames: request.frames()))
    }

    /// A service answered an OFFER.
    mutating func handleOfferReply(
        _ reply: ControlReply, from peer: [UInt8], now: UInt64, into output: inout [BrokerOutput]
    ) {
        guard let offer = dispatches.removeOffer(reply.requestID) else { return }
        let duration = now &- offer.startedAt
        guard reply.status.isSuccess, let body = try? reply.json() else {
            record(
                offer.dispatch, phase: offer.phase, service: offer.service, status: "error", answer: nil,
                error: reply.errorMessage, duration: duration)
            advance(offer.dispatch, now: now, into: &output)
            return
        }
        let text = body["result"]?.stringValue ?? "continue"
        guard let result = CallbackResult(rawValue: text) else {
            let error = "answered '\(text)'; expected continue, return, returnYES or returnNO"
            record(
                offer.dispatch, phase: offer.phase, service: offer.service, status: "error", answer: nil,
                error: error, duration: duration)
            advance(offer.dispatch, now: now, into: &output)
            return
        }
        guard var dispatch = dispatches[offer.dispatch] else { return }
        let mode = dispatch.phases[offer.phase].mode
        if let rewritten = body["payload"], case .object = rewritten, mode != .concurrent {
            dispatch.payload = rewritten
        }
        if dispatch.descriptor?.completion != nil { dispatch.completions[offer.step] = body["completion"] }
        if result != .continue && dispatch.decided == nil && mode != .notify {
            dispatch.decided = (offer.service, result)
            let isHandlePhase =
                dispatch.event == .didFinishLaunching
                && dispatch.phases[offer.phase].event == .didFinishLaunching
            if isHandlePhase && (result == .returnYES || result == .returnNO) { dispatch.endedEarly = true }
        }
        dispatches[offer.dispatch] = dispatch
        record(
            offer.dispatch, phase: offer.phase, service: offer.service, status: "answered", answer: result,
            error: nil, duration: duration)
        advance(offer.dispatch, now: now, into: &output)
    }

    mutating func expireOffers(now: UInt64, into output: inout [BrokerOutput]) {
        for id in dispatches.offers(where: { $0.deadline <= now }) {
            guard let offer = dispatches.removeOffer(id) else { continue }
            let limit = (offer.deadline &- offer.startedAt) / 1_000_000
            record(
                offer.dispatch, phase: offer.phase, service: offer.service, status: "timeout", answer: nil,
                error: "no answer within \(limit) ms", duration: now &- offer.startedAt)
            output.append(
                .log("dispatch #\(offer.dispatch): \(offer.service) missed its \(limit) ms deadline; skipped")
            )
            advance(offer.dispatch, now: now, into: &output)
        }
    }

    /// `service` left: its outstanding steps are skipped at once.
    mutating func offersGone(
        to service: String, reason: String, now: UInt64, into output: inout [BrokerOutput]
    ) {
        for id in dispatches.offers(where: { $0.service == service }) {
            guard let offer = dispatches.removeOffer(id) else { continue }
            record(
                offer.dispatch, phase: offer.phase, service: service, status: "gone", answer: nil,
                error: "service \(reason) during the step",
                duration: now &- offer.startedAt)
            advance(offer.dispatch, now: now, into: &output)
        }
    }

    private mutating func record(
        _ id: UInt64, phase: Int, service: String, status: String, answer: CallbackResult?, error: String?,
        duration: UInt64
    ) {
        guard var dispatch = dispatches[id] else { return }
        var entry: [String: JSONValue] = [
            "service": .string(service), "event": .string(dispatch.phases[phase].event.rawValue),
            "status": .string(status),
            "answer": answer.map { .string($0.rawValue) } ?? .null,
            "durationUs": .int(Int64(duration / 1000)),
        ]
        if let error { entry["error"] = .string(error) }
        if status != "answered" && dispatch.descriptor?.completion != nil { dispatch.failures += 1 }
        dispatch.trace.append(.object(entry))
        dispatches[id] = dispatch
    }

    private mutating func finish(
        _ dispatch: DispatchTable.Dispatch, now: UInt64, into output: inout [BrokerOutput]
    ) {
        dispatches[dispatch.id] = nil
        let result = dispatch.decided?.result ?? .continue
        let returnValue: JSONValue =
            if dispatch.descriptor?.defaultReturn != nil {
                .bool(dispatch.decided?.result.returnValue ?? dispatch.descriptor?.defaultReturn ?? false)
            } else {
                .null
            }
        var body: [String: JSONValue] = [
            "event": .string(dispatch.event.rawValue), "dispatch": .int(Int64(dispatch.id)),
            "result": .string(result.rawValue),
            "returnValue": returnValue, "decidedBy": dispatch.decided.map { .string($0.service) } ?? .null,
            "payload": dispatch.payload, "trace": .array(dispatch.trace),
            "lifecycle": .string(lifecycle.rawValue),
            "durationUs": .int(Int64((now &- dispatch.startedAt) / 1000)),
            "handlers": .int(Int64(Set(dispatch.phases.flatMap { $0.steps.map(\.service) }).count)),
        ]
        if dispatch.event == .didFinishLaunching { body["launchEndedEarly"] = .bool(dispatch.endedEarly) }
        if let rule = dispatch.descriptor?.completion {
            body["completion"] = rule.combine(
                dispatch.completions.sorted { $0.key < $1.key }.map(\.value), failures: dispatch.failures)
            body["completionRule"] = .string(rule.rawValue)
        }
        send(dispatch.client, ControlReply(requestID: dispatch.requestID, json: .object(body)), into: &output)
        if !dispatch.endedEarly {
            launched(
                dispatch.event, payload: JSONWriter.encode(dispatch.payload),
                by: "a dispatched \(dispatch.event)", now: now, into: &output)
        }
        publishRuntime(
            .dispatchDidComplete,
            [
                "event": .string(dispatch.event.rawValue), "dispatch": .int(Int64(dispatch.id)),
                "result": .string(result.rawValue),
                "decidedBy": dispatch.decided.map { .string($0.service) } ?? .null,
            ], now: now, into: &output)
    }
}

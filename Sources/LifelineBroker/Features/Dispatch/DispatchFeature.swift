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
struct DispatchFeature: BrokerFeature {
    private var dispatches = DispatchTable()

    mutating func handle(_ request: ClientRequest, from peer: [UInt8], id: [UInt8], in core: inout BrokerCore)
    {
        guard case .dispatch(let dispatch) = request else { return }
        core.stats.dispatches &+= 1
        let name = dispatch.event
        if let problem = EventChecks.publicationProblem(name, payload: dispatch.payloadBytes) {
            core.fail(peer, id, problem.status, problem.message)
            return
        }
        let requestedTimeout = dispatch.stepTimeoutMilliseconds
        let payload = dispatch.payload
        guard EventChecks.moveLifecycle(name, force: dispatch.force, peer: peer, id: id, in: &core) else {
            return
        }
        let descriptor = EventCatalog.descriptor(for: name)
        func phase(_ event: EventName, _ mode: Mode) -> DispatchTable.Phase {
            let steps = core.registry.handlers(of: event).map { entry in
                DispatchTable.Step(
                    service: entry.registration.name,
                    timeoutMilliseconds: entry.registration.deadlines[event] ?? requestedTimeout
                        ?? descriptor?.deadlineMilliseconds
                        ?? core.configuration.dispatchStepTimeout.wholeMilliseconds)
            }
            return DispatchTable.Phase(event: event, mode: mode, steps: steps)
        }
        typealias Mode = DispatchMode
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
            startedAt: core.now)
        advance(dispatchID, in: &core)
    }

    /// Offers the next step(s), or moves to the next phase, or finishes.
    private mutating func advance(_ id: UInt64, in core: inout BrokerCore) {
        while var dispatch = dispatches[id] {
            guard dispatch.outstanding.isEmpty else { return }
            guard dispatch.phase < dispatch.phases.count else {
                finish(dispatch, in: &core)
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
                offer(dispatch, phase: dispatch.phase, step: index, in: &core)
            }
        }
    }

    private mutating func offer(
        _ dispatch: DispatchTable.Dispatch, phase: Int, step: Int, in core: inout BrokerCore
    ) {
        let phaseInfo = dispatch.phases[phase]
        let target = phaseInfo.steps[step]
        guard let entry = core.registry.entry(named: target.service) else {
            record(
                dispatch.id, phase: phase, service: target.service, status: .gone, answer: nil,
                error: "not registered any more", duration: .zero, in: &core)
            return
        }
        // The first instance whose connection is open: one that closed cannot answer.
        guard let peer = entry.instances.first(where: \.connected)?.peer else {
            record(
                dispatch.id, phase: phase, service: target.service, status: .gone, answer: nil,
                error: "its connection has closed", duration: .zero, in: &core)
            return
        }
        let key = dispatches.addOffer(
            DispatchTable.Offer(
                dispatch: dispatch.id, phase: phase, step: step, service: target.service, startedAt: core.now,
                timeoutMilliseconds: target.timeoutMilliseconds))
        let offerID = core.correlator.open(
            .dispatch, key: key, peer: peer, deadline: core.deadline(target.timeoutMilliseconds))
        let offer = DispatchOffer(
            event: phaseInfo.event, dispatch: dispatch.id, step: step,
            timeoutMilliseconds: target.timeoutMilliseconds, mode: phaseInfo.mode,
            completion: dispatch.descriptor?.completion, payload: dispatch.payload)
        core.send(peer, .offer(offer), id: offerID)
    }

    /// A service answered an OFFER.
    mutating func answered(_ wait: Correlator.Entry, with reply: ControlReply, in core: inout BrokerCore) {
        guard let offer = dispatches.removeOffer(wait.key) else { return }
        core.stats.dispatchSteps[offer.service, default: 0] &+= 1
        let duration = core.now - offer.startedAt
        let answer: Answer
        do throws(ProtocolError) {
            guard reply.status.isSuccess else { throw ProtocolError(reply.status, reply.errorMessage) }
            answer = try Answer(body: reply.body)
        } catch {
            record(
                offer.dispatch, phase: offer.phase, service: offer.service, status: .error, answer: nil,
                error: error.message, duration: duration, in: &core)
            advance(offer.dispatch, in: &core)
            return
        }
        let result = answer.result
        guard var dispatch = dispatches[offer.dispatch] else { return }
        let mode = dispatch.phases[offer.phase].mode
        if let rewritten = answer.payload, mode != .concurrent { dispatch.payload = rewritten }
        if dispatch.descriptor?.completion != nil { dispatch.completions[offer.step] = answer.completion }
        if result != .continue && dispatch.decided == nil && mode != .notify {
            dispatch.decided = (offer.service, result)
            let isHandlePhase =
                dispatch.event == .didFinishLaunching
                && dispatch.phases[offer.phase].event == .didFinishLaunching
            if isHandlePhase && (result == .returnYES || result == .returnNO) { dispatch.endedEarly = true }
        }
        dispatches[offer.dispatch] = dispatch
        record(
            offer.dispatch, phase: offer.phase, service: offer.service, status: .answered, answer: result,
            error: nil, duration: duration, in: &core)
        advance(offer.dispatch, in: &core)
    }

    mutating func expired(_ wait: Correlator.Entry, in core: inout BrokerCore) {
        guard let offer = dispatches.removeOffer(wait.key) else { return }
        let limit = offer.timeoutMilliseconds
        record(
            offer.dispatch, phase: offer.phase, service: offer.service, status: .timeout, answer: nil,
            error: "no answer within \(limit) ms", duration: core.now - offer.startedAt, in: &core)
        core.log("dispatch #\(offer.dispatch): \(offer.service) missed its \(limit) ms deadline; skipped")
        advance(offer.dispatch, in: &core)
    }

    /// A service left, or the instance a step was offered to: its outstanding steps are skipped at once.
    mutating func react(to announcement: Announcement, in core: inout BrokerCore) {
        let (names, peer, reason): ([String], [UInt8]?, String)
        switch announcement {
        case .gone(let registration, let why):
            (names, peer, reason) = ([registration.name], nil, why.rawValue)
        case .instanceLeft(let registration, let on, let why, _):
            (names, peer, reason) = ([registration.name], on, why.rawValue)
        case .cutOff(let on, let served): (names, peer, reason) = (served, on, "lost its connection")
        default: return
        }
        for name in names { skipOffers(to: name, on: peer, reason: reason, in: &core) }
    }

    private mutating func skipOffers(
        to name: String, on peer: [UInt8]?, reason: String, in core: inout BrokerCore
    ) {
        for key in dispatches.offers(to: name) {
            if let peer, core.correlator.peer(owner: .dispatch, key: key) != peer { continue }
            guard let offer = dispatches.removeOffer(key) else { continue }
            core.correlator.close(owner: .dispatch, key: key)
            record(
                offer.dispatch, phase: offer.phase, service: name, status: .gone, answer: nil,
                error: "service \(reason) during the step", duration: core.now - offer.startedAt,
                in: &core)
            advance(offer.dispatch, in: &core)
        }
    }

    private mutating func record(
        _ id: UInt64, phase: Int, service: String, status: DispatchTable.StepStatus, answer: CallbackResult?,
        error: String?, duration: Duration, in core: inout BrokerCore
    ) {
        guard var dispatch = dispatches[id] else { return }
        if core.tracing {
            core.publishRuntime(
                .dispatchDidStep,
                [
                    "dispatch": .int(Int64(id)), "event": .string(dispatch.phases[phase].event.rawValue),
                    "service": .string(service), "status": .string(status.rawValue),
                    "durationMs": .double(Double(duration.wholeNanoseconds) / 1e6),
                ])
        }
        if status != .answered && dispatch.descriptor?.completion != nil { dispatch.failures += 1 }
        dispatch.trace.append(
            DispatchOutcome.Step(
                service: service, event: dispatch.phases[phase].event, status: status.rawValue,
                answer: answer,
                durationMicroseconds: Int64(duration.wholeNanoseconds / 1000), error: error))
        dispatches[id] = dispatch
    }

    private mutating func finish(_ dispatch: DispatchTable.Dispatch, in core: inout BrokerCore) {
        dispatches[dispatch.id] = nil
        let result = dispatch.decided?.result ?? .continue
        let returnValue: Bool? =
            dispatch.descriptor?.defaultReturn != nil
            ? dispatch.decided?.result.returnValue ?? dispatch.descriptor?.defaultReturn ?? false : nil
        var outcome = DispatchOutcome(
            event: dispatch.event, dispatch: dispatch.id, result: result, returnValue: returnValue,
            decidedBy: dispatch.decided?.service, payload: dispatch.payload, trace: dispatch.trace,
            lifecycle: core.lifecycle.rawValue)
        outcome.durationMicroseconds = Int64((core.now - dispatch.startedAt).wholeNanoseconds / 1000)
        outcome.handlers = Set(dispatch.phases.flatMap { $0.steps.map(\.service) }).count
        if dispatch.event == .didFinishLaunching { outcome.launchEndedEarly = dispatch.endedEarly }
        if let rule = dispatch.descriptor?.completion {
            outcome.completion = rule.combine(
                dispatch.completions.sorted { $0.key < $1.key }.map(\.value), failures: dispatch.failures)
            outcome.completionRule = rule.rawValue
        }
        core.reply(dispatch.client, dispatch.requestID, outcome)
        if !dispatch.endedEarly {
            EventChecks.announceLaunch(
                dispatch.event, payload: JSONWriter.encode(dispatch.payload),
                by: "a dispatched \(dispatch.event)", in: &core)
        }
        core.publishRuntime(
            .dispatchDidComplete,
            [
                "event": .string(dispatch.event.rawValue), "dispatch": .int(Int64(dispatch.id)),
                "result": .string(result.rawValue),
                "decidedBy": dispatch.decided.map { .string($0.service) } ?? .null,
            ])
    }
}

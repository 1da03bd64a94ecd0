import LifelineProtocol

/// The checks PUBLISH and DISPATCH share: the event's name and payload, and the lifecycle state.
enum EventChecks {
    /// Why a client may not publish `name` with `payload`, or nil. Custom events need only a JSON
    /// object, checked without building it; catalogued events have their fields checked.
    /// `nameChecked`: the name passed these checks already (the previous event of a batch had it).
    static func publicationProblem(_ name: EventName, payload: [UInt8], nameChecked: Bool = false)
        -> ProtocolError?
    {
        do {
            if name.isCustom {
                if !nameChecked, let problem = EventName.syntaxProblem(in: name.rawValue) {
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

    /// Applies the lifecycle transition of `name`; answers 409 and returns false when it makes no sense
    /// in the current state (unless forced).
    static func moveLifecycle(
        _ name: EventName, force: Bool, peer: [UInt8], id: [UInt8], in core: inout BrokerCore
    ) -> Bool {
        switch core.lifecycle.applying(name) {
        case .success(let next):
            if let next { core.lifecycle = next }
            return true
        case .failure(let error):
            if force {
                if let next = LifecycleState.target(of: name) {
                    core.log("forced \(name) while \(core.lifecycle.rawValue); now \(next.rawValue)")
                    core.lifecycle = next
                }
                return true
            }
            core.fail(peer, id, .conflict, error.description)
            return false
        }
    }

    /// didFinishLaunching and didBecomeActive are announced: the boot loader reacts to them.
    static func announceLaunch(
        _ name: EventName, payload: [UInt8], by reason: @autoclosure () -> String, in core: inout BrokerCore
    ) {
        guard name == .didFinishLaunching || name == .didBecomeActive else { return }
        let json = (try? JSONParser.parse(payload)) ?? .emptyObject
        core.announce(.launched(name, payload: json, by: reason()))
    }
}

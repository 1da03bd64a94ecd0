import Lifeline
import LifelineProtocol

extension ServiceTestHost {
    /// What the in-memory broker answers to a request of the service's client.
    static func answer(_ request: ClientRequest, state: Shared) -> Result<
        ControlReply, LifelineError
    > {
        switch request {
        case .publish(let publish):
            let events =
                [(publish.event, publish.payload)] + publish.rest.map { ($0.name, $0.payload) }
            let sequence = state.withLock { state -> UInt64 in
                for (event, bytes) in events {
                    let payload =
                        bytes.isEmpty ? .emptyObject : (try? JSONParser.parse(bytes)) ?? .emptyObject
                    state.published.append(Publication(event: event.rawValue, payload: payload))
                    state.sequence += 1
                }
                return state.sequence
            }
            return .success(
                ControlReply(
                    requestID: [],
                    json: [
                        "event": .string(events[events.count - 1].0.rawValue),
                        "sequence": .int(Int64(sequence)),
                        "count": .int(Int64(events.count)), "subscribers": 0,
                    ]))
        case .apps(let apps, let operationID):
            let header = ClientRequest.apps(apps, operationID: operationID).controlRequest().header
            state.withLock { $0.stackChanges.append(header) }
            return .success(ControlReply(requestID: [], json: ["stack": []]))
        case .hello, .heartbeat, .acknowledge:
            return .success(ControlReply(requestID: [], json: .emptyObject))
        case .register, .unregister:
            // A runtime service the service registers (or drops) lives in this process: the
            // in-memory broker routes calls to it by name without a registry.
            return .success(ControlReply(requestID: [], json: .emptyObject))
        case .release:
            // One process holds every key here: a deactivated key is simply activated again.
            return .success(
                ControlReply(requestID: [], status: .ok, body: ReleaseReply(released: true).bytes))
        default:
            return .success(
                .error(
                    .unavailable,
                    "the in-memory broker of ServiceTestHost does not answer \(request.command.rawValue)",
                    requestID: []))
        }
    }
}

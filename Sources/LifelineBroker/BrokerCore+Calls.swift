import LifelineProtocol

/// CALL: forwarded to the service, its answer passed back unchanged, bounded by a deadline.
extension BrokerCore {
    mutating func call(
        _ request: ControlRequest, from peer: [UInt8], now: UInt64, into output: inout [BrokerOutput]
    ) {
        let id = request.requestID
        guard let service = request.header["service"]?.stringValue,
            let method = request.header["method"]?.stringValue
        else {
            refuse(
                peer,
                ProtocolError(.badRequest, "CALL needs string fields 'service' and 'method'", requestID: id),
                into: &output)
            return
        }
        let timeout: Int
        do {
            timeout =
                try integer(request, "timeoutMs", in: 1...configuration.maximumCallTimeoutMilliseconds)
                ?? configuration.defaultCallTimeoutMilliseconds
        } catch {
            refuse(peer, error, into: &output)
            return
        }
        guard let entry = registry.entry(named: service) else {
            send(
                peer, ControlReply.error(.notFound, "no service named '\(service)'", requestID: id),
                into: &output)
            return
        }
        if deferUntilStarted(service, request, from: peer, now: now, into: &output) { return }
        guard entry.registration.methods.contains(method) else {
            let known =
                entry.registration.methods.isEmpty
                ? "none" : entry.registration.methods.joined(separator: ", ")
            let message = "service '\(service)' has no method '\(method)'; it answers: \(known)"
            send(peer, ControlReply.error(.notFound, message, requestID: id), into: &output)
            return
        }
        let forwardID = calls.add(
            PendingCalls.Call(
                client: peer, clientRequestID: id, service: service, method: method,
                deadline: deadline(now, timeout),
                timeoutMilliseconds: timeout))
        let forward = ControlRequest(
            .call, requestID: forwardID,
            header: [
                "service": .string(service), "method": .string(method), "timeoutMs": .int(Int64(timeout)),
            ],
            payload: request.payload ?? [])
        output.append(.send(peer: entry.peer, frames: forward.frames()))
    }

    mutating func forwardServiceReply(
        _ reply: ControlReply, from peer: [UInt8], into output: inout [BrokerOutput]
    ) {
        guard let call = calls.complete(reply.requestID) else {
            output.append(
                .log(
                    "dropped a late or unknown reply '\(String(decoding: reply.requestID, as: UTF8.self))' (status \(reply.status.rawValue))"
                ))
            return
        }
        var forwarded = reply
        forwarded.requestID = call.clientRequestID
        send(call.client, forwarded, into: &output)
    }

    mutating func expireCalls(now: UInt64, into output: inout [BrokerOutput]) {
        for call in calls.removeExpired(now: now) {
            let message =
                "\(call.service).\(call.method) did not answer within \(call.timeoutMilliseconds) ms"
            output.append(.log("call timed out: \(message)"))
            send(
                call.client, ControlReply.error(.timeout, message, requestID: call.clientRequestID),
                into: &output)
        }
    }
}

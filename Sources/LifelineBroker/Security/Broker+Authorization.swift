import LifelineProtocol

extension Broker {
    /// Why the peer that authenticated with the public key `key` may not make `request`; nil when it
    /// may. The Context's reads (LOOKUP, APPS queries, BOOT report) and the registry's own
    /// bookkeeping are open to every key the allow-list lets in; who owns a name is checked by the
    /// registry itself.
    func denial(of request: ClientRequest, key: String, peer: [UInt8], in policy: AccessPolicy) -> String? {
        // A key revoked by a reload may still have a connection open for a moment: it gets nothing.
        guard policy.names[key] != nil else { return "key \(key) is not in the policy any more" }
        switch request {
        case .hello, .heartbeat, .lookup, .attach, .acknowledge, .unregister:
            return nil
        case .list: return policy.denial(publicKey: key, .observe("list every service (LIST)"))
        case .stats: return policy.denial(publicKey: key, .observe("read the broker's statistics (STATS)"))
        case .trace: return policy.denial(publicKey: key, .observe("trace dispatches and calls (TRACE)"))
        case .register(let register):
            if let denial = policy.denial(publicKey: key, .register(register.registration.name)) {
                return denial
            }
            for event in register.registration.events {
                if let denial = policy.denial(publicKey: key, .subscribe(event.rawValue)) { return denial }
            }
            return nil
        case .publish(let publish):
            if let denial = policy.denial(publicKey: key, .publish(publish.event.rawValue)) { return denial }
            guard publish.isMixed else { return nil }
            var checked: Set<EventName> = [publish.event]
            for event in publish.rest where checked.insert(event.name).inserted {
                if let denial = policy.denial(publicKey: key, .publish(event.name.rawValue)) { return denial }
            }
            return nil
        case .dispatch(let dispatch): return policy.denial(publicKey: key, .publish(dispatch.event.rawValue))
        case .call(let call):
            return policy.denial(publicKey: key, .call(service: call.address, method: call.method))
        case .release: return nil
        case .actors: return policy.denial(publicKey: key, .observe("list the actors by key (ACTORS)"))
        case .replay(let replay):
            if !core.registry.isKnown(peer: peer),
                let denial = policy.denial(publicKey: key, .admin("replay the journal"))
            {
                return denial
            }
            for event in replay.events {
                if let denial = policy.denial(publicKey: key, .subscribe(event.rawValue)) { return denial }
            }
            return nil
        case .apps(let request, let operationID):
            return apps.refusal(of: request, operationID: operationID, peer: peer, in: core)
        case .boot(let boot):
            if case .report = boot { return nil }
            return policy.denial(publicKey: key, .admin("start or run boot tasks"))
        }
    }
}

import LifelineProtocol

extension Broker {
    /// Why the peer holding `key` may not make `request`; nil when it may. Reads and the
    /// registry's own bookkeeping are open to every key the allow-list lets in.
    func denial(of request: ClientRequest, key: String, peer: [UInt8], in policy: AccessPolicy) -> String? {
        switch request {
        case .hello, .heartbeat, .lookup, .list, .attach, .acknowledge, .unregister, .stats, .trace:
            return nil
        case .register(let register):
            if let denial = policy.denial(key, .register(register.registration.name)) { return denial }
            for event in register.registration.events {
                if let denial = policy.denial(key, .subscribe(event.rawValue)) { return denial }
            }
            return nil
        case .publish(let publish):
            if let denial = policy.denial(key, .publish(publish.event.rawValue)) { return denial }
            guard publish.isMixed else { return nil }
            var checked: Set<EventName> = [publish.event]
            for event in publish.rest where checked.insert(event.name).inserted {
                if let denial = policy.denial(key, .publish(event.name.rawValue)) { return denial }
            }
            return nil
        case .dispatch(let dispatch): return policy.denial(key, .publish(dispatch.event.rawValue))
        case .call(let call): return policy.denial(key, .call(service: call.service, method: call.method))
        case .replay(let replay):
            if !core.registry.isKnown(peer: peer),
                let denial = policy.denial(key, .admin("replay the journal"))
            {
                return denial
            }
            for event in replay.events {
                if let denial = policy.denial(key, .subscribe(event.rawValue)) { return denial }
            }
            return nil
        case .apps(let apps, _):
            if apps.isQuery { return nil }
            let hostsApps = core.registry.entries.values.contains {
                $0.peer == peer && !$0.registration.apps.isEmpty
            }
            return hostsApps
                ? nil : policy.denial(key, .admin("change the micro-app stack (APPS \(apps.operation))"))
        case .boot(let boot):
            if case .report = boot { return nil }
            return policy.denial(key, .admin("start or run boot tasks"))
        }
    }
}

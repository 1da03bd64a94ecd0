import Foundation
import Lifeline
import LifelineBroker
import LifelineProtocol
import LifelineSupport
import Synchronization

/// `lifeline broker --group`: a member stands by until it leads, leads until it stops or loses its
/// lease, then stands by again. Prints `STANDBY …` once it holds the leader's copy and
/// `READY control=EP bus=EP term=N` when it leads.
enum GroupBrokerRun {
    static func serve(
        _ configuration: BrokerConfiguration, _ group: GroupConfiguration, _ identity: BrokerIdentity
    )
        throws
    {
        let log: @Sendable (String) -> Void = { Console.log("broker", $0, level: Console.level(of: $0)) }
        let member: GroupMember
        do {
            member = try GroupMember(configuration: group, broker: configuration, log: log)
        } catch {
            throw LifelineError(.internalError, "cannot start: \(error.message)")
        }
        let serverStop = Mutex<(@Sendable () -> Void)?>(nil)
        let serverReload = Mutex<(@Sendable () -> Void)?>(nil)
        let stopMember = member.stopper
        let reloadMember = member.policyReloader
        let watcher = SignalWatcher { number in
            Console.log("broker", "received signal \(number); shutting down")
            SystemdNotifier.notify("STOPPING=1")
            stopMember()
            serverStop.withLock { $0 }?()
        }
        // The policy is read again by the leading server and by the stand-in sockets alike.
        let hangups = Mutex(0)
        let hangup = SignalWatcher([SIGHUP]) { _ in
            Console.log("broker", "received SIGHUP; reading the policy again")
            hangups.withLock { $0 += 1 }
            reloadMember()
            serverReload.withLock { $0 }?()
        }
        Console.log(
            "broker",
            "pid \(getpid()) member \(group.member) of group \(group.name) (\(group.members.joined(separator: ","))), group socket \(member.replicateEndpoint), etcd \(group.etcd.joined(separator: ","))"
        )
        if group.keys == nil {
            log(
                "the group socket \(member.replicateEndpoint) is plain text (--insecure): it believes any peer that reaches it; give the members --group-keys off a trusted network"
            )
        } else {
            log(
                "the group socket speaks CURVE and admits the keys of \(group.members.joined(separator: ",")) only"
            )
        }
        var leading = configuration
        leading.controlEndpoints = member.controlEndpoints
        leading.busEndpoints = member.busEndpoints
        while !member.isStopping {
            guard case .lead(let term, let position) = member.standBy(print: { Console.out($0) }) else {
                break
            }
            let server: BrokerServer
            // A SIGHUP while the server reads the policy and before it takes SIGHUPs is not lost.
            let hangupsBefore = hangups.withLock { $0 }
            do {
                server = try BrokerServer(
                    configuration: leading, identity: identity,
                    group: GroupLeader(member: member, term: term, position: position), log: log)
            } catch {
                log("cannot lead: \(error); standing by again")
                member.leadership.resign(term: term)
                continue
            }
            serverStop.withLock { $0 = server.stopper }
            serverReload.withLock { $0 = server.reloader }
            if hangups.withLock({ $0 }) != hangupsBefore { server.reloader() }
            if member.isStopping { server.stopper() }
            Console.log(
                "broker",
                "leading group \(group.name) under term \(term) from \(position): control on \(server.controlEndpoints.joined(separator: ",")), bus on \(server.busEndpoints.joined(separator: ",")) (epoch \(server.epoch))"
            )
            Console.out(
                "READY control=\(server.controlEndpoints.joined(separator: ",")) bus=\(server.busEndpoints.joined(separator: ",")) term=\(term)"
            )
            SystemdNotifier.notify("READY=1\nSTATUS=leading group \(group.name) under term \(term)")
            server.run()
            serverStop.withLock { $0 = nil }
            serverReload.withLock { $0 = nil }
            if let why = server.deposedReason {
                // The key goes at once (if it is still this term's), not when the lease runs out.
                member.leadership.resign(term: term)
                log("stopped leading: \(why); standing by")
                SystemdNotifier.notify("STATUS=standing by in group \(group.name)")
            }
        }
        member.leadership.stop()
        withExtendedLifetime((watcher, hangup)) {}
    }
}

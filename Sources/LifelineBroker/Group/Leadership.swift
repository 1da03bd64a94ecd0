import Dispatch
import Foundation
import Glibc
import LifelineProtocol
import LifelineSupport
import Synchronization

/// The group's dealings with etcd, on a thread of its own (`ll-etcd`): this member's lease (kept
/// alive every quarter of its TTL) and member record, the leader key (a put-if-absent under the
/// lease: Patroni's leader lock), and what the broker's thread is told about it.
///
/// Fencing: ``validUntil`` is when the lease could expire at the earliest — the send time of the
/// last renewal that etcd answered, plus the TTL it granted, less a margin. A leader stops
/// accepting requests once it passes, before etcd can hand the key to another member.
package final class Leadership: Sendable {
    /// What the broker's thread hears.
    package enum Notice: Sendable, Equatable {
        /// Another member leads (or, nil, none does).
        case leader(MemberRecord?)
        /// This member now holds the leader key, under `term`; `members` are the others' records.
        case won(term: UInt64, members: [MemberRecord])
        /// This member's leadership is gone (the lease or the key lost), with why.
        case lost(String)
    }

    private enum Command: Sendable {
        case suspect(lease: Int64)
        case resign(term: UInt64)
        case campaign(Bool)
        case stop
    }

    package let notices = Mailbox<Notice>()
    private let commands = Mailbox<Command>()
    private let valid = Atomic<UInt64>(0)
    private let configuration: GroupConfiguration
    private let log: @Sendable (String) -> Void
    private let record: Mutex<MemberRecord>
    private let finished = DispatchSemaphore(value: 0)

    /// Monotonic nanoseconds after which this member may not act as leader.
    package var validUntil: UInt64 { valid.load(ordering: .acquiring) }

    /// Checks etcd and the group's configuration, then starts the thread.
    /// - Throws: ``GroupSetupError`` when no etcd answers (naming where it looked) or the group is
    ///   registered in etcd with other members.
    package init(
        configuration: GroupConfiguration, record: MemberRecord, log: @escaping @Sendable (String) -> Void
    ) throws(GroupSetupError) {
        self.configuration = configuration
        self.log = log
        self.record = Mutex(record)
        let etcd = EtcdClient(endpoints: configuration.etcd)
        let members = configuration.members.sorted()
        let document: JSONValue = ["members": .array(members.map(JSONValue.string))]
        do {
            let (created, held) = try etcd.createIfAbsent(
                configuration.configKey, JSONWriter.encode(document))
            if !created {
                let registered =
                    (try? JSONParser.parse(held.value))?["members"]?.arrayValue?.compactMap(\.stringValue)
                    ?? []
                guard registered.sorted() == members else {
                    throw GroupSetupError(
                        "group '\(configuration.name)' is registered in etcd with members \(registered.sorted().joined(separator: ",")), but this broker was started with --members \(members.joined(separator: ",")): two groups cannot share a name"
                    )
                }
            }
        } catch let error as EtcdError {
            throw GroupSetupError(
                error.unreachable
                    ? "no etcd answered at \(configuration.etcd.joined(separator: ",")): \(error.message)"
                    : error.message)
        } catch let error as GroupSetupError {
            throw error
        } catch {
            throw GroupSetupError("\(error)")
        }
        let thread = Thread { [self] in
            ThreadName.set("ll-etcd")
            run(EtcdClient(endpoints: configuration.etcd))
            finished.signal()
        }
        thread.start()
    }

    /// The leader `lease` fell silent: revoke it (when it still holds the key), so that a member
    /// can take over before the lease's TTL runs out.
    package func suspect(lease: Int64) { commands.post(.suspect(lease: lease)) }

    /// Gives the key up (taken under `term`, when this member could not gather a majority).
    package func resign(term: UInt64) { commands.post(.resign(term: term)) }

    /// Whether this member may try to take the key when it is free.
    package func campaign(_ allowed: Bool) { commands.post(.campaign(allowed)) }

    /// Stops the thread and waits (a second at most) until the lease is revoked, so the key is
    /// free at once.
    package func stop() {
        commands.post(.stop)
        _ = finished.wait(timeout: .now() + 1)
    }

    /// Updates the endpoints this member announces (once they are bound).
    package func announce(_ updated: MemberRecord) { record.withLock { $0 = updated } }

    private func run(_ etcd: EtcdClient) {
        var lease: Int64 = 0
        var ttl = configuration.leaseSeconds
        var renewed: UInt64 = 0
        var announced: MemberRecord?
        var leader: MemberRecord?
        var told = false
        var term: UInt64 = 0
        var campaigning = true
        var pauseUntil: UInt64 = 0
        var quiet = false
        while true {
            var stop = false
            for command in commands.drain() {
                switch command {
                case .stop: stop = true
                case .campaign(let allowed): campaigning = allowed
                case .suspect(let suspected):
                    if leader?.lease == suspected, suspected != lease {
                        log("the leader \(leader?.member ?? "?") fell silent; revoking its lease")
                        try? etcd.revoke(suspected)
                    }
                case .resign(let resigned):
                    if term == resigned {
                        _ = try? etcd.delete(configuration.leaderKey, ifCreatedAt: resigned)
                        term = 0
                        valid.store(0, ordering: .releasing)
                        pauseUntil =
                            SystemClock.monotonicNanoseconds() &+ UInt64.random(in: 200...600) * 1_000_000
                    }
                }
            }
            if stop {
                valid.store(0, ordering: .releasing)
                if lease != 0 { try? etcd.revoke(lease) }
                return
            }
            do {
                let now = SystemClock.monotonicNanoseconds()
                if lease == 0 {
                    (lease, ttl) = try etcd.grantLease(seconds: configuration.leaseSeconds)
                    renewed = now
                    announced = nil
                } else if now &- renewed >= UInt64(ttl) * 250_000_000 {
                    let left = try etcd.keepAlive(lease)
                    if left == 0 {
                        log("lease \(lease) expired in etcd")
                        lease = 0
                        if term != 0 {
                            term = 0
                            // The why first: a leader fenced by the store below reads it then.
                            notices.post(.lost("its etcd lease expired"))
                            valid.store(0, ordering: .releasing)
                        }
                        continue
                    }
                    renewed = now
                    if term != 0 {
                        valid.store(now &+ UInt64(left) * 1_000_000_000 &- 500_000_000, ordering: .releasing)
                    }
                }
                var mine = record.withLock { $0 }
                mine.lease = lease
                if announced != mine {
                    try etcd.put(
                        configuration.memberKey(configuration.member), JSONWriter.encode(mine.json),
                        lease: lease)
                    announced = mine
                }
                let held = try etcd.get(configuration.leaderKey)
                if quiet {
                    log("etcd answers again")
                    quiet = false
                }
                if term != 0 {
                    if held?.createRevision != term || held?.lease != lease {
                        term = 0
                        notices.post(.lost("the leader key is no longer this member's"))
                        valid.store(0, ordering: .releasing)
                    }
                } else if let held, var holder = MemberRecord(held.value) {
                    holder.term = held.createRevision
                    if holder.member == configuration.member && holder.lease == lease {
                        // This run holds the key but does not lead: it gave it up (resigned, or
                        // stopped leading) and the delete did not reach etcd. Give it up again.
                        log("the leader key is still this member's although it stands by; giving it up")
                        _ = try etcd.delete(configuration.leaderKey, ifCreatedAt: held.createRevision)
                        continue
                    }
                    if holder.member == configuration.member && holder.lease != lease {
                        // An earlier run of this member led, and is gone: free the key now rather
                        // than when that run's lease runs out.
                        log("the leader key is held by an earlier run of this member; revoking its lease")
                        try etcd.revoke(holder.lease)
                        continue
                    }
                    if holder != leader || !told {
                        leader = holder
                        told = true
                        notices.post(.leader(holder))
                    }
                } else {
                    if leader != nil || !told {
                        leader = nil
                        told = true
                        notices.post(.leader(nil))
                    }
                    // Only with a majority of the members announced: a member alone at a cold
                    // start would win a term it cannot use, and the next one would make another.
                    let others = campaigning && now >= pauseUntil ? others(etcd) : []
                    if campaigning && now >= pauseUntil && others.count + 1 >= configuration.quorum {
                        let (created, entry) = try etcd.createIfAbsent(
                            configuration.leaderKey, JSONWriter.encode(mine.json), lease: lease)
                        if created {
                            term = entry.createRevision
                            valid.store(
                                renewed &+ UInt64(ttl) * 1_000_000_000 &- 500_000_000, ordering: .releasing)
                            campaigning = false
                            told = false
                            leader = nil
                            notices.post(.won(term: term, members: others))
                        }
                    }
                }
            } catch {
                if !quiet {
                    log("etcd: \(error.message)")
                    quiet = true
                }
            }
            var descriptor = pollfd(fd: commands.fileDescriptor, events: Int16(POLLIN), revents: 0)
            _ = poll(&descriptor, 1, 100)
        }
    }

    /// The other members' records, as etcd holds them now.
    private func others(_ etcd: EtcdClient) -> [MemberRecord] {
        configuration.members.filter { $0 != configuration.member }.compactMap { member in
            (try? etcd.get(configuration.memberKey(member))).flatMap { $0.flatMap { MemberRecord($0.value) } }
        }
    }
}

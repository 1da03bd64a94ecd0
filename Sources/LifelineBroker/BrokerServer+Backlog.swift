import Glibc
import LifelineSupport
import ZeroMQ

/// Messages for a control peer whose queue is full wait in ``PeerBacklogs`` and leave, in order, as
/// it reads.
extension BrokerServer {
    /// Sends `frames` to `peer` on the ROUTER without waiting; false when the peer's queue is full
    /// (nothing was sent). A peer gone meanwhile, or a failed send, is logged and counts as sent.
    func sendToPeer(_ peer: [UInt8], _ frames: [[UInt8]]) -> Bool {
        do {
            let queued = try peer.dropLast(4).withUnsafeBytes {
                try router.send($0, more: true, dontWait: true)
            }
            guard queued else { return false }
            try router.send(frames: frames)
        } catch let error as ZeroMQError where error.code == EHOSTUNREACH {
            log("dropped a message to \(core.peerName(peer)): it has disconnected")
        } catch {
            log("send to \(core.peerName(peer)) failed: \(error)")
        }
        return true
    }

    /// Keeps `frames` for `peer` until its queue has room; when too much waits already, closes the
    /// peer's connection instead (what it missed would otherwise be a hole in what it gets).
    func holdBack(_ frames: [[UInt8]], for peer: [UInt8], connection: UInt32) {
        switch backlogs.hold(frames, for: peer, connection: connection) {
        case .held(let first):
            if first {
                log(
                    "holding messages to \(core.peerName(peer)): its queue is full (it reads slower than the broker sends); they leave in order as it reads"
                )
            }
        case .overflow(let held):
            log(
                "closed the connection of \(core.peerName(peer)): its queue is full and \(held) message(s) wait for it, more than the broker holds (\(backlogs.limitPerPeer >> 20) MiB a peer, \(backlogs.limit >> 20) MiB in all); they are dropped, and a service registers again and resumes"
            )
            if let descriptor = routerConnections.descriptor(of: connection) {
                shutdown(descriptor, Int32(SHUT_RDWR))
            }
        }
    }

    /// Sends what waits for slow peers, as far as their queues take it.
    func flushBacklogs() {
        guard !backlogs.isEmpty else { return }
        // A group's leader that is not sure of its lease answers nobody.
        if let group, !group.certainlyLeads() { return }
        routerConnections.update()
        // A peer gone meanwhile: what waits for it is dropped, and the core learns it is gone.
        noteClosedConnections()
        let flushed = backlogs.flush(isOpen: routerConnections.isOpen) { peer, frames in
            sendToPeer(peer, frames)
        }
        for result in flushed {
            routerMayHaveInput = true
            guard result.drained else { continue }
            log("sent every message held for \(core.peerName(result.peer))")
        }
    }

    /// Forgets what waited for peers whose connections closed.
    func forgetBacklogs(of connections: [UInt32]) {
        for connection in connections {
            guard let forgotten = backlogs.forget(connection), forgotten.count > 0 else { continue }
            log(
                "dropped \(forgotten.count) message(s) held for \(core.peerName(forgotten.peer)): its connection has closed"
            )
        }
    }
}

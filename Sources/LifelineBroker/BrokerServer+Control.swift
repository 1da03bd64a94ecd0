import LifelineSupport
import ZeroMQ

/// Reading the control socket: requests in batches, and the connections that closed.
extension BrokerServer {
    /// Handles what waits on the control socket, flushing after its first message (which goes out
    /// at once) and then after every batch of up to 64 messages: the journal records of a batch are
    /// written with one `write`, before any of its events goes on the bus. Returns true when it
    /// received anything.
    @discardableResult
    func drainRouter() -> Bool {
        var batch = 0
        var received = false
        var flushedFirst = false
        defer {
            flush()
            noteClosedConnections()
        }
        while let frames = next(on: router, "control", mayHaveInput: &routerMayHaveInput) {
            received = true
            guard frames.count >= 2 else { continue }
            routerConnections.update()
            let peer = Self.peer(frames[0], on: routerConnections.number(of: sender.fileDescriptor))
            if zap != nil {
                note(sender, .control)
                if let key = sender.userID, let policy = core.policy, policy.names[key] == nil {
                    cutOff(key, peer: peer, descriptor: sender.fileDescriptor)
                    continue
                }
            }
            core.handleControl(
                peer: peer, frames: frames[1...], key: zap == nil ? nil : sender.userID,
                now: SystemClock.now,
                into: &output)
            batch += 1
            // The first message of a wake-up is answered before the socket is read again (that read,
            // usually empty, costs two system calls); a burst is then flushed 64 messages at a time.
            if batch == 64 || !flushedFirst {
                flushedFirst = true
                flush()
                batch = 0
            }
        }
        return received
    }

    /// Tells the core which control connections closed since the last look.
    func noteClosedConnections() {
        let closed = routerConnections.takeClosed()
        guard !closed.isEmpty else { return }
        forgetBacklogs(of: closed.map(\.number))
        core.connectionsClosed(closed.map(\.number), now: SystemClock.now, into: &output)
        flush()
    }

    /// The next message waiting on `socket` (with its sender in `sender`: the connection's
    /// descriptor, and its key when CURVE is on); nil when none
    /// waits, or when receiving failed: then it says so and leaves `mayHaveInput` set, since what is
    /// queued behind the failure would not make the descriptor readable again.
    func next(on socket: ZMQSocket, _ name: String, mayHaveInput: inout Bool) -> [[UInt8]]? {
        // This read settles what was possible before it; a send after it raises the flag again.
        mayHaveInput = false
        do {
            return try socket.receiveFrames(dontWait: true, sender: &sender)
        } catch {
            log("receive failed on the \(name) socket: \(error)")
            mayHaveInput = true
            return nil
        }
    }
}

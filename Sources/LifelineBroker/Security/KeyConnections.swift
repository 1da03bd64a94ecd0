import Glibc

/// The connections (file descriptors) each CURVE public key last spoke on, per socket, so that the
/// broker can close those of a key it revokes; and the closes it has put off until a DISCONNECT
/// had time to leave.
struct KeyConnections {
    enum Socket { case control, bus }

    /// One connection as the kernel knows it: a descriptor number may be reused by a later
    /// connection, the socket's inode is not.
    struct Handle: Hashable {
        var descriptor: Int32
        var inode: UInt64
    }

    private struct Owner {
        var key: String
        var socket: Socket
        var inode: UInt64
    }

    private var owners: [Int32: Owner] = [:]
    private var descriptors: [String: Set<Int32>] = [:]
    private var delayed: [(due: UInt64, handles: [Handle])] = []
    private var closing: Set<Handle> = []

    /// Remembers that `key` spoke on `descriptor` of `socket` (the connection the descriptor holds
    /// now: its inode is read each time).
    mutating func note(_ descriptor: Int32, key: String, socket: Socket) {
        guard descriptor >= 0, let inode = Self.inode(of: descriptor) else { return }
        if let previous = owners[descriptor] {
            if previous.key == key && previous.socket == socket && previous.inode == inode { return }
            descriptors[previous.key]?.remove(descriptor)
        }
        owners[descriptor] = Owner(key: key, socket: socket, inode: inode)
        descriptors[key, default: []].insert(descriptor)
    }

    /// Every public key that has spoken on a connection still remembered.
    var keys: Set<String> { Set(descriptors.keys) }

    /// Forgets and returns the connections of `key` on `sockets`, as they were when the key last
    /// spoke on them.
    mutating func take(_ key: String, on sockets: Set<Socket>) -> [Handle] {
        var taken: [Handle] = []
        for descriptor in descriptors[key] ?? [] {
            guard let owner = owners[descriptor], sockets.contains(owner.socket) else { continue }
            owners[descriptor] = nil
            descriptors[key]?.remove(descriptor)
            taken.append(Handle(descriptor: descriptor, inode: owner.inode))
        }
        if descriptors[key]?.isEmpty == true { descriptors[key] = nil }
        return taken
    }

    /// True when `descriptor` (as it is now) is already to be closed.
    func isClosing(_ descriptor: Int32) -> Bool {
        guard let inode = Self.inode(of: descriptor) else { return false }
        return closing.contains(Handle(descriptor: descriptor, inode: inode))
    }

    /// Closes `handles` at `due` (monotonic nanoseconds) instead of now.
    mutating func close(_ handles: [Handle], at due: UInt64) {
        guard !handles.isEmpty else { return }
        delayed.append((due, handles))
        closing.formUnion(handles)
    }

    /// When the next delayed close is due.
    var nextDue: UInt64? { delayed.map(\.due).min() }

    /// Closes what is due by `now`; returns how many connections it closed.
    @discardableResult
    mutating func closeDue(now: UInt64) -> Int {
        var closed = 0
        var done: [Handle] = []
        delayed.removeAll { entry in
            guard entry.due <= now else { return false }
            closed += Self.close(entry.handles)
            done += entry.handles
            return true
        }
        closing.subtract(done)
        return closed
    }

    /// Shuts `handles` down (both directions; libzmq then drops the connection): a descriptor whose
    /// inode is not the one recorded belongs to another connection now and is left alone. Returns
    /// how many it shut.
    static func close(_ handles: [Handle]) -> Int {
        var closed = 0
        for handle in handles where inode(of: handle.descriptor) == handle.inode {
            if shutdown(handle.descriptor, Int32(SHUT_RDWR)) == 0 { closed += 1 }
        }
        return closed
    }

    private static func inode(of descriptor: Int32) -> UInt64? {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        return UInt64(info.st_ino)
    }
}

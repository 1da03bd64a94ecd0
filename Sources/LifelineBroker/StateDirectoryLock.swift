import LifelineSupport

/// The lock a broker (or a group's member) holds on its state directory (`DIR/lock`) for its whole
/// life: two brokers on one directory would give out the same sequence numbers and overwrite each
/// other's journal.
enum StateDirectoryLock {
    /// Takes the lock of `directory`.
    /// - Throws: ``StateDirectoryError`` naming the broker that holds it, or why the lock file cannot
    ///   be used.
    static func take(_ directory: String) throws(StateDirectoryError) -> FileLock {
        do {
            return try FileLock(path: directory + "/lock")
        } catch {
            switch error {
            case .held(let pid):
                throw StateDirectoryError(
                    "the state directory \(directory) is in use by another broker\(pid.map { " (pid \($0))" } ?? ""): two brokers on one directory would give out the same sequence numbers; give each its own --state-dir"
                )
            case .unusable(let reason): throw StateDirectoryError(reason)
            }
        }
    }
}

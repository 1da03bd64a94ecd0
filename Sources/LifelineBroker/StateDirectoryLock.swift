import Foundation
import Glibc

/// The lock a broker holds on its state directory (`lock`, an exclusive `flock`), for its whole
/// life: two brokers on one directory would give out the same sequence numbers and overwrite each
/// other's journal. The kernel releases it when the process ends, however it ends.
final class StateDirectoryLock {
    private let descriptor: Int32

    /// Takes the lock of `directory`.
    /// - Throws: ``StateDirectoryError`` naming the broker that holds it, or why the lock file cannot
    ///   be opened.
    init(directory: String) throws {
        let path = directory + "/lock"
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw StateDirectoryError("cannot open \(path) (\(String(cString: strerror(errno))))")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let reason = errno
            var holder = [UInt8](repeating: 0, count: 32)
            let count = holder.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
            close(descriptor)
            guard reason == EWOULDBLOCK else {
                throw StateDirectoryError("cannot lock \(path) (\(String(cString: strerror(reason))))")
            }
            let pid = String(decoding: holder.prefix(max(0, count)), as: UTF8.self)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            throw StateDirectoryError(
                "the state directory \(directory) is in use by another broker\(pid.isEmpty ? "" : " (pid \(pid))"): two brokers on one directory would give out the same sequence numbers; give each its own --state-dir"
            )
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(descriptor, 0)
        _ = pid.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }
}

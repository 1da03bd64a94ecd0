import Foundation
import Glibc

/// An exclusive lock on a file (`flock`), held while this object lives, with the holder's pid
/// written in the file: what keeps a second broker off a state directory, and a second `lifeline up`
/// off a run directory. The kernel releases it when the process ends, however it ends.
package final class FileLock {
    /// Why the lock was not taken.
    package enum Failure: Error {
        /// Another process holds it (its pid, when the file says).
        case held(by: String?)
        /// The file cannot be opened or locked: why.
        case unusable(String)
    }

    private let descriptor: Int32

    /// Takes the lock of the file at `path`, creating the file when missing.
    /// - Throws: ``Failure``: held by another process, or the file cannot be used.
    package init(path: String) throws(Failure) {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw .unusable("cannot open \(path) (\(String(cString: strerror(errno))))")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let reason = errno
            var holder = [UInt8](repeating: 0, count: 32)
            let count = holder.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
            close(descriptor)
            guard reason == EWOULDBLOCK else {
                throw .unusable("cannot lock \(path) (\(String(cString: strerror(reason))))")
            }
            let pid = String(decoding: holder.prefix(max(0, count)), as: UTF8.self)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            throw .held(by: pid.isEmpty ? nil : pid)
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(descriptor, 0)
        _ = pid.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }
}

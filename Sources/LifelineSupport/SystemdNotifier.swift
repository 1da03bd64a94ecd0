import Foundation
import Glibc

/// systemd's readiness protocol (`sd_notify`) without libsystemd: one datagram to the unix socket
/// `$NOTIFY_SOCKET` (a path, or `@name` in the abstract namespace) per state change.
public enum SystemdNotifier {
    /// Sends `state` (`READY=1`, `STOPPING=1`, `WATCHDOG=1`, `STATUS=…`); false when there is no
    /// `$NOTIFY_SOCKET` or the datagram could not be sent.
    @discardableResult
    public static func notify(_ state: String) -> Bool {
        guard let path = ProcessInfo.processInfo.environment["NOTIFY_SOCKET"], !path.isEmpty else {
            return false
        }
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in bytes.enumerated() { buffer[index] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
        let message = Array(state.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                message.withUnsafeBytes {
                    sendto(descriptor, $0.baseAddress, $0.count, 0, socketAddress, length)
                }
            }
        }
        return sent == message.count
    }

    /// Half the watchdog period systemd asks for (`$WATCHDOG_USEC`), in milliseconds; nil without one.
    public static var watchdogMilliseconds: Int? {
        guard let text = ProcessInfo.processInfo.environment["WATCHDOG_USEC"], let micros = Int(text),
            micros > 0
        else { return nil }
        return max(1, micros / 2000)
    }
}

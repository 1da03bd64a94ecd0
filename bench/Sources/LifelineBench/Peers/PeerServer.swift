import Foundation
import Glibc

/// Where the peers' servers are and how they are started: nats-server and redis-server, as Debian
/// installs them, on loopback ports of their own (Redis also on a Unix socket for the ipc run).
enum PeerServer {
    /// The executable `name` in PATH or the sbin directories, or nil when it is not installed.
    static func executable(_ name: String) -> URL? {
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        for directory in path + ["/usr/sbin", "/usr/bin", "/usr/local/bin", "/usr/local/sbin"] {
            let candidate = URL(fileURLWithPath: directory).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }

    /// A loopback TCP port nobody listens on now.
    static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard bound else { throw BenchError("no free loopback port: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Waits until `connect` succeeds (the server listens), for up to 10 s.
    /// - Throws: ``BenchError`` naming the server when it never does.
    static func waitUntilListening(_ name: String, _ connect: () throws -> Void) throws {
        let deadline = Date().addingTimeInterval(10)
        while true {
            do { return try connect() } catch {
                guard Date() < deadline else {
                    throw BenchError("\(name) did not listen within 10 s: \(error)")
                }
                usleep(20_000)
            }
        }
    }
}

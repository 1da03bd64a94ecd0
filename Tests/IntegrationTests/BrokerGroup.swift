import Foundation
import Glibc
import Testing

/// A real etcd (Debian's etcd-server) on loopback ports of its own, with its own data directory,
/// waited for by its "ready to serve client requests" line; stopped and removed by ``stop()``.
final class EtcdProcess: @unchecked Sendable {
    /// Whether `etcd` is on the PATH (deploy/test.sh installs it as root).
    static let available: Bool = FileManager.default.isExecutableFile(atPath: "/usr/bin/etcd")

    let process: ChildProcess
    let url: String
    private let directory: URL

    init() async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lifeline-etcd-\(UUID().uuidString)")
        let client = try Self.freePort()
        let peer = try Self.freePort()
        url = "http://127.0.0.1:\(client)"
        process = try ChildProcess(
            "/usr/bin/etcd",
            [
                "--name", "test", "--data-dir", directory.path, "--listen-client-urls", url,
                "--advertise-client-urls", url, "--listen-peer-urls", "http://127.0.0.1:\(peer)",
                "--initial-advertise-peer-urls", "http://127.0.0.1:\(peer)",
                "--initial-cluster", "test=http://127.0.0.1:\(peer)",
            ])
        try await process.waitForLine(.stderr, seconds: 20) { $0.contains("ready to serve client requests") }
    }

    func stop() {
        process.kill()
        try? FileManager.default.removeItem(at: directory)
    }

    /// A loopback TCP port nobody listens on now (etcd's gateway cannot take port 0).
    static func freePort() throws -> UInt16 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard bound else { throw HarnessError("no free port: \(String(cString: strerror(errno)))") }
        return UInt16(bigEndian: address.sin_port)
    }
}

/// A `lifeline broker --group` member on ephemeral ports (fixed on restart: the same control, bus
/// and group socket), with its own state directory.
final class GroupMemberProcess: @unchecked Sendable {
    let name: String
    let arguments: [String]
    private(set) var process: ChildProcess
    private(set) var control = ""

    /// Starts member `name` of `group` (members `members`) and waits for its STANDBY or READY line.
    init(
        _ name: String, group: String, members: [String], etcd: String, state: URL, extra: [String] = []
    ) async throws {
        self.name = name
        let ports = try (0..<3).map { _ in try EtcdProcess.freePort() }
        arguments =
            [
                "broker", "--group", group, "--member", name, "--members", members.joined(separator: ","),
                "--etcd", etcd, "--state-dir", state.appendingPathComponent(name).path,
                "--control", "tcp://127.0.0.1:\(ports[0])", "--bus", "tcp://127.0.0.1:\(ports[1])",
                "--replicate", "tcp://127.0.0.1:\(ports[2])", "--advertise", "127.0.0.1", "--lease-ttl", "2",
                "--heartbeat-interval", "250",
            ] + extra
        control = "tcp://127.0.0.1:\(ports[0])"
        process = try ChildProcess("lifeline", arguments)
    }

    /// Its role as its last READY (leads) or STANDBY line says; nil before either.
    var role: String? {
        process.lines().last { $0.hasPrefix("READY ") || $0.hasPrefix("STANDBY ") }?.split(separator: " ")
            .first
            .map(String.init)
    }

    /// Kills it with `signal` and starts it again with the same arguments.
    func restart(_ signal: Int32 = SIGKILL) async throws {
        process.kill(signal)
        _ = try await process.waitForExit()
        process = try ChildProcess("lifeline", arguments)
    }
}

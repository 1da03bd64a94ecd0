import Foundation

/// Two test hosts on one machine: network namespaces joined by a veth pair, each end with an
/// address of its own (10.200.N.1 and 10.200.N.2). Needs root and iproute2; removed by ``remove()``.
struct NetworkHosts {
    let names: (String, String)
    let addresses: (String, String)
    let links: (String, String)

    static let ip = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// True where namespaces can be made here (root and iproute2).
    static var available: Bool { getuid() == 0 && ip != nil }

    init() throws {
        let tag = String(UInt32.random(in: 0..<0xFFFF), radix: 16)
        let subnet = Int.random(in: 1...250)
        names = ("lla\(tag)", "llb\(tag)")
        addresses = ("10.200.\(subnet).1", "10.200.\(subnet).2")
        links = ("vla\(tag)", "vlb\(tag)")
        try Self.run(["netns", "add", names.0])
        try Self.run(["netns", "add", names.1])
        try Self.run(["link", "add", links.0, "type", "veth", "peer", "name", links.1])
        try Self.run(["link", "set", links.0, "netns", names.0])
        try Self.run(["link", "set", links.1, "netns", names.1])
        for (name, link, address) in [(names.0, links.0, addresses.0), (names.1, links.1, addresses.1)] {
            try Self.run(["-n", name, "link", "set", "lo", "up"])
            try Self.run(["-n", name, "addr", "add", "\(address)/24", "dev", link])
            try Self.run(["-n", name, "link", "set", link, "up"])
        }
    }

    /// Cuts (`up: false`) or restores the link between the hosts.
    func setLink(up: Bool) throws {
        try Self.run(["-n", names.0, "link", "set", links.0, up ? "up" : "down"])
    }

    /// Runs a product of this package on host A (`first`) or B.
    func process(onFirst first: Bool, _ executable: String, _ arguments: [String]) throws -> ChildProcess {
        try ChildProcess(
            Self.ip ?? "ip",
            ["netns", "exec", first ? names.0 : names.1, Executables.url(executable).path] + arguments)
    }

    func remove() {
        _ = try? Self.run(["netns", "del", names.0])
        _ = try? Self.run(["netns", "del", names.1])
    }

    static func run(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ip ?? "ip")
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        try ChildProcess.spawning.withLock { _ in try process.run() }
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            throw HarnessError("ip \(arguments.joined(separator: " ")) failed: \(text)")
        }
    }
}

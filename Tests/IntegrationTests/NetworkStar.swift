import Foundation

/// Test hosts joined by one switch, on one machine: a hub namespace holding a bridge
/// (10.201.N.254) and a namespace per host, each on the bridge through a veth pair (10.201.N.1,
/// .2, …). One host can be cut from the others (its port on the bridge set down) while what runs
/// on it still reaches itself. Needs root and iproute2; removed by ``remove()``.
struct NetworkStar {
    let hub: String
    let hubAddress: String
    let hosts: [String]
    let addresses: [String]
    private let ports: [String]

    init(hosts count: Int) throws {
        let tag = String(UInt32.random(in: 0..<0xFFFF), radix: 16)
        let subnet = Int.random(in: 1...250)
        hub = "llh\(tag)"
        hubAddress = "10.201.\(subnet).254"
        hosts = (0..<count).map { "ll\($0)h\(tag)" }
        addresses = (0..<count).map { "10.201.\(subnet).\($0 + 1)" }
        ports = (0..<count).map { "vh\($0)\(tag)" }
        let bridge = "br\(tag)"
        do {
            try NetworkHosts.run(["netns", "add", hub])
            try NetworkHosts.run(["-n", hub, "link", "set", "lo", "up"])
            try NetworkHosts.run(["-n", hub, "link", "add", bridge, "type", "bridge"])
            try NetworkHosts.run(["-n", hub, "addr", "add", "\(hubAddress)/24", "dev", bridge])
            try NetworkHosts.run(["-n", hub, "link", "set", bridge, "up"])
            for index in 0..<count {
                let inside = "vm\(index)\(tag)"
                try NetworkHosts.run(["netns", "add", hosts[index]])
                try NetworkHosts.run(["link", "add", ports[index], "type", "veth", "peer", "name", inside])
                try NetworkHosts.run(["link", "set", ports[index], "netns", hub])
                try NetworkHosts.run(["link", "set", inside, "netns", hosts[index]])
                try NetworkHosts.run(["-n", hub, "link", "set", ports[index], "master", bridge])
                try NetworkHosts.run(["-n", hub, "link", "set", ports[index], "up"])
                try NetworkHosts.run(["-n", hosts[index], "link", "set", "lo", "up"])
                try NetworkHosts.run([
                    "-n", hosts[index], "addr", "add", "\(addresses[index])/24", "dev", inside,
                ])
                try NetworkHosts.run(["-n", hosts[index], "link", "set", inside, "up"])
            }
        } catch {
            remove()
            throw error
        }
    }

    /// Cuts (`up: false`) or restores host `index`'s link to the switch.
    func setLink(host index: Int, up: Bool) throws {
        try NetworkHosts.run(["-n", hub, "link", "set", ports[index], up ? "up" : "down"])
    }

    /// Runs `executable` (a product of this package, or an absolute path) in `namespace`.
    func process(
        in namespace: String, _ executable: String, _ arguments: [String], environment: [String: String] = [:]
    ) throws -> ChildProcess {
        let path = executable.hasPrefix("/") ? executable : Executables.url(executable).path
        return try ChildProcess(
            NetworkHosts.ip ?? "ip", ["netns", "exec", namespace, path] + arguments, environment: environment)
    }

    func remove() {
        for namespace in hosts + [hub] { _ = try? NetworkHosts.run(["netns", "del", namespace]) }
    }
}

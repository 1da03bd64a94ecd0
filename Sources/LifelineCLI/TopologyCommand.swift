import Foundation
import Lifeline
import LifelineBroker
import LifelineProtocol
import LifelineSupport

/// `lifeline topology FILE`.
enum TopologyCommand: CLICommand {
    static let name = "topology"
    static let summary = "check a topology file and list what it launches"
    static let usage = """
        usage: lifeline topology FILE [--shell | --json]

        Reads a topology (see deploy/topology.json, deploy/group.json) and prints the broker
        endpoints (a group's members) and the services. --shell prints one line per process for
        scripts: 'broker CONTROL BUS [--launcher APP]' (with a group, 'member ID CONTROL BUS
        REPLICATE' for each member instead) then 'service NAME EXECUTABLE [ARG ...]'.
        """
    static let shell = CommandLineOption.flag("--shell", help: "one line per process, for scripts")
    static let json = CommandLineOption.flag("--json", help: "print JSON instead of text")
    static let options = [shell, json]

    static func run(_ arguments: inout CommandLineArguments) throws -> Int32 {
        let shell = arguments.flag(Self.shell)
        let json = arguments.flag(Self.json)
        guard let path = arguments.positional() else { throw UsageError("topology needs a FILE") }
        try arguments.finish()
        guard let data = FileManager.default.contents(atPath: path) else {
            throw LifelineError(.notFound, "cannot read \(path)")
        }
        let topology: Topology
        do {
            topology = try Topology.parse(Array(data))
        } catch let error as JSONParseError {
            throw LifelineError(.badRequest, "\(path) is not JSON: \(error)")
        } catch let error as ProtocolError {
            throw LifelineError(.badRequest, "\(path): \(error.message)")
        }
        let binaries = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            .deletingLastPathComponent()
        for (index, service) in topology.services.enumerated() {
            let path =
                service.executable.hasPrefix("/")
                ? service.executable : binaries.appendingPathComponent(service.executable).path
            guard FileManager.default.isExecutableFile(atPath: path) else {
                throw LifelineError(
                    .notFound, "services[\(index)] ('\(service.name)'): no executable at \(path)")
            }
        }
        let layers = try topology.startLayers()
        if shell {
            if let group = topology.group {
                for member in group.members {
                    Console.out("member \(member.member) \(member.control) \(member.bus) \(member.replicate)")
                }
            } else {
                Console.out(
                    "broker \(topology.control) \(topology.bus)"
                        + (topology.launcher.map { " --launcher \($0)" } ?? ""))
            }
            // One line per process, named as the supervisor names them (`cart`, `cart@2`, …).
            for service in topology.services {
                for number in 1...service.replicas {
                    let name = number == 1 ? service.name : "\(service.name)@\(number)"
                    Console.out(
                        (["service", name, service.executable] + service.arguments).joined(separator: " "))
                }
            }
        } else if json {
            let services: [JSONValue] = topology.services.map {
                [
                    "name": .string($0.name), "executable": .string($0.executable),
                    "args": .array($0.arguments.map { .string($0) }), "replicas": .int(Int64($0.replicas)),
                    "restart": .string($0.restart.rawValue), "after": .array($0.after.map { .string($0) }),
                ]
            }
            var document: [String: JSONValue] = [
                "services": .array(services),
                "supervisor": [
                    "restarts": .int(Int64(topology.restartLimit.restarts)),
                    "seconds": .int(Int64(topology.restartLimit.seconds)),
                ],
            ]
            var boot: [String: JSONValue] = [
                "phases": .array(topology.bootPhases.map { .string($0) }),
                "tasks": .array(topology.bootTasks.keys.sorted().compactMap { topology.bootTasks[$0] }),
            ]
            if let wait = topology.bootWaitMilliseconds { boot["waitMs"] = .int(Int64(wait)) }
            document["boot"] = .object(boot)
            if let group = topology.group {
                document["group"] = [
                    "name": .string(group.name), "etcd": .array(group.etcd.map { .string($0) }),
                    "members": .array(
                        group.members.map {
                            [
                                "member": .string($0.member), "control": .string($0.control),
                                "bus": .string($0.bus), "replicate": .string($0.replicate),
                            ]
                        }),
                ]
            } else {
                document["broker"] = ["control": .string(topology.control), "bus": .string(topology.bus)]
            }
            if let launcher = topology.launcher {
                var broker = document["broker"]?.objectValue ?? [:]
                broker["launcher"] = .string(launcher)
                document["broker"] = .object(broker)
            }
            Console.out(JSONValue.object(document).description)
        } else {
            if let group = topology.group {
                Console.out(
                    "broker group \(group.name) (etcd \(group.etcd.joined(separator: ",")))"
                        + (topology.launcher.map { ", launcher \($0)" } ?? ""))
                for member in group.members {
                    Console.out(
                        "member \(member.member): control \(member.control), bus \(member.bus), group socket \(member.replicate)"
                    )
                }
            } else {
                Console.out(
                    "broker: control \(topology.control), bus \(topology.bus)"
                        + (topology.launcher.map { ", launcher \($0)" } ?? ""))
            }
            for service in topology.services {
                Console.out(
                    "service \(service.name): \(([service.executable] + service.arguments).joined(separator: " ")) (\(service.replicas > 1 ? "\(service.replicas) replicas, " : "")restart: \(service.restart.rawValue)\(service.after.isEmpty ? "" : ", after \(service.after.joined(separator: ", "))"))"
                )
            }
            Console.out("start order: " + layers.map { $0.joined(separator: " + ") }.joined(separator: " → "))
        }
        return 0
    }
}

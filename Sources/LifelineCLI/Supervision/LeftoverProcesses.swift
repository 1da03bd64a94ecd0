import Foundation

/// The processes an earlier `lifeline up` left running when it died without stopping them (killed
/// with SIGKILL, say): the live processes its pid files name. A process that started after its pid
/// file was written is another one that reused the pid, and is left alone.
struct LeftoverProcesses {
    struct Process: Equatable {
        let name: String
        let pid: Int32
        /// A broker, stopped after the services.
        var isBroker: Bool { name == "broker" || name.hasPrefix("broker-") }
    }

    let runDirectory: URL
    let processes: [Process]

    /// What the pid files of `runDirectory` (but the supervisor's own, `up.pid`) name and still runs.
    init(in runDirectory: URL) {
        self.runDirectory = runDirectory
        let files = (try? FileManager.default.contentsOfDirectory(atPath: runDirectory.path)) ?? []
        processes = files.filter { $0.hasSuffix(".pid") && $0 != "up.pid" }.sorted().compactMap { file in
            let url = runDirectory.appendingPathComponent(file)
            guard let text = try? String(contentsOf: url, encoding: .utf8),
                let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)), pid > 0,
                DownCommand.isAlive(pid),
                let written = (try? FileManager.default.attributesOfItem(atPath: url.path))?[
                    .modificationDate]
                    as? Date,
                let started = Self.startTime(of: pid), started <= written.timeIntervalSince1970 + 1
            else { return nil }
            return Process(name: String(file.dropLast(4)), pid: pid)
        }
    }

    var isEmpty: Bool { processes.isEmpty }

    /// `name (pid N), …`.
    var description: String { processes.map { "\($0.name) (pid \($0.pid))" }.joined(separator: ", ") }

    /// Stops the services, then the brokers: SIGTERM, SIGKILL after 5 s; removes their pid files.
    func stop() {
        for group in [processes.filter { !$0.isBroker }, processes.filter(\.isBroker)] where !group.isEmpty {
            Termination.stop(group.map { ($0.name, $0.pid) }, as: "down", isRunning: DownCommand.isAlive)
        }
        for process in processes {
            try? FileManager.default.removeItem(
                at: runDirectory.appendingPathComponent("\(process.name).pid"))
        }
    }

    /// When `pid` started, in seconds since 1970 (from `/proc`: its start in clock ticks after boot).
    static func startTime(of pid: Int32) -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")"),
            let system = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
            let bootLine = system.split(separator: "\n").first(where: { $0.hasPrefix("btime ") }),
            let boot = Double(bootLine.dropFirst(6).trimmingCharacters(in: .whitespaces))
        else { return nil }
        // After the command's closing parenthesis: state is field 3, starttime field 22.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 19, let ticks = Double(fields[19]) else { return nil }
        return boot + ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}

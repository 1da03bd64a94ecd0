import Foundation
import Glibc
import LifelineProtocol
import Testing

/// What a broker does with a state directory it cannot safely use: another broker holds it, a file
/// there cannot be read, the journal is damaged.
@Suite("Real processes: the broker's state directory", .timeLimit(.minutes(1)))
struct StateDirectoryTests {
    static func directory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lifeline-state-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// A broker on `directory` that is expected to stop at start: its exit status and its log.
    static func refused(_ directory: URL) async throws -> (status: Int32, log: String) {
        let broker = try ChildProcess(
            "lifeline",
            [
                "broker", "--control", "tcp://127.0.0.1:*", "--bus", "tcp://127.0.0.1:*", "--state-dir",
                directory.path,
            ])
        defer { broker.kill() }
        let status = try await broker.waitForExit(seconds: 20)
        await broker.waitForOutputToEnd()
        return (status, broker.lines(.stderr).joined(separator: "\n"))
    }

    @Test(
        "a second broker on a state directory in use stops at start naming the first's pid; once the first is killed -9, one starts"
    )
    func oneBrokerPerDirectory() async throws {
        let state = try Self.directory()
        defer { try? FileManager.default.removeItem(at: state) }
        let first = try await BrokerProcess(["--state-dir", state.path])
        let second = try await Self.refused(state)
        #expect(second.status == 1)
        #expect(
            second.log.contains(
                "the state directory \(state.path) is in use by another broker (pid \(first.process.pid))"),
            "\(second.log)")
        #expect(
            try await first.cli(["publish", "com.example.kept"]).status == 0, "the first goes on serving")
        first.process.kill(SIGKILL)
        _ = try await first.process.waitForExit()
        let third = try await BrokerProcess(["--state-dir", state.path])
        defer { third.process.kill() }
        try await third.process.waitForLine(.stderr, seconds: 10) {
            $0.contains("restored 1 journal event(s)")
        }
    }

    @Test(
        "a journal or sessions file that is there but cannot be read (a directory in its place) stops the broker at start, naming it, and is left as it was"
    )
    func unreadableFiles() async throws {
        for file in ["journal.log", "sessions.json", "boot.json"] {
            let state = try Self.directory()
            defer { try? FileManager.default.removeItem(at: state) }
            let path = state.appendingPathComponent(file)
            try FileManager.default.createDirectory(at: path, withIntermediateDirectories: false)
            let refused = try await Self.refused(state)
            #expect(refused.status == 1, "\(file)")
            #expect(
                refused.log.contains("cannot read \(path.path) (it is not a regular file)"), "\(refused.log)")
            var isDirectory: ObjCBool = false
            #expect(FileManager.default.fileExists(atPath: path.path, isDirectory: &isDirectory))
            #expect(isDirectory.boolValue, "left as it was")
        }
    }

    @Test("a damaged journal is not restored (a new epoch), and its bytes are kept beside it")
    func damagedJournalKept() async throws {
        let state = try Self.directory()
        defer { try? FileManager.default.removeItem(at: state) }
        let first = try await BrokerProcess(["--state-dir", state.path])
        for number in 0..<3 {
            #expect(try await first.cli(["publish", "com.example.n", "n:=\(number)"]).status == 0)
        }
        first.process.kill(SIGKILL)
        _ = try await first.process.waitForExit()
        let journal = state.appendingPathComponent("journal.log")
        var bytes = try Array(Data(contentsOf: journal))
        let payload = Array(#"{"n":0}"#.utf8)
        let at = try #require(
            (0...(bytes.count - payload.count)).first { Array(bytes[$0..<$0 + payload.count]) == payload })
        bytes[at + 5] = UInt8(ascii: "7")
        try Data(bytes).write(to: journal)
        let second = try await BrokerProcess(["--state-dir", state.path])
        defer { second.process.kill() }
        try await second.process.waitForLine(.stderr, seconds: 10) {
            $0.contains("the journal is damaged at byte")
        }
        let kept = try await second.process.waitForLine(.stderr, seconds: 10) {
            $0.contains("kept the damaged journal as ")
        }
        let copy = try #require(kept.components(separatedBy: "kept the damaged journal as ").last)
        #expect(try Array(Data(contentsOf: URL(fileURLWithPath: copy))) == bytes)
    }

    @Test(
        "a journal it cannot write stops the broker before the step's events leave (exit 1, saying why), the journal left whole; once it can, it starts again and restores it"
    )
    func unwritableJournalStops() async throws {
        let state = try Self.directory()
        defer { try? FileManager.default.removeItem(at: state) }
        let first = try await BrokerProcess(["--state-dir", state.path])
        #expect(try await first.cli(["publish", "com.example.kept"]).status == 0)
        first.process.kill(SIGKILL)
        _ = try await first.process.waitForExit()
        let journal = state.appendingPathComponent("journal.log")
        let before = try Data(contentsOf: journal)
        // The start's rewrite goes through journal.log.tmp: a directory there makes it fail.
        let temporary = state.appendingPathComponent("journal.log.tmp")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: false)
        let refused = try await Self.refused(state)
        #expect(refused.status == 1)
        #expect(
            refused.log.contains(
                "could not rewrite \(journal.path) (through \(temporary.path): Is a directory): stopping before this step's events are sent or acknowledged"
            ), "\(refused.log)")
        #expect(try Data(contentsOf: journal) == before, "the journal is left whole")
        try FileManager.default.removeItem(at: temporary)
        let again = try await BrokerProcess(["--state-dir", state.path])
        defer { again.process.kill() }
        try await again.process.waitForLine(.stderr, seconds: 10) {
            $0.contains("restored 1 journal event(s)")
        }
    }
}

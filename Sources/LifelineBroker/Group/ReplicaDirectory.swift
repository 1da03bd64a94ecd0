import Foundation
import Glibc
import LifelineProtocol
import LifelineSupport

/// A group member's state directory: the broker's state files (`journal.log`, `sessions.json`,
/// `boot.json`, `lifecycle.json`), which replicated operations and snapshots change, the position they stand at
/// (`replica.position`) and whose copy it is (`group.json`: group, member, the highest term seen).
package final class ReplicaDirectory {
    package let path: String
    private let journal: JournalFile
    package private(set) var position: ReplicaPosition
    /// The highest term this member has seen; it refuses older ones.
    package private(set) var term: UInt64

    /// Opens `path` for `member` of `group`, creating it when needed.
    /// - Throws: ``GroupSetupError`` when the directory belongs to another group or member, or
    ///   cannot be made.
    package init(path: String, group: String, member: String) throws(GroupSetupError) {
        self.path = path
        do { try Directories.create(path, what: "the state directory") } catch {
            throw GroupSetupError(error.description)
        }
        journal = JournalFile(path: path + "/journal.log")
        let identity = FileManager.default.contents(atPath: path + "/group.json").flatMap {
            try? JSONParser.parse(Array($0))
        }
        if let identity {
            let (held, holder) = (identity["group"]?.stringValue ?? "", identity["member"]?.stringValue ?? "")
            guard held == group, holder == member else {
                throw GroupSetupError(
                    "the state directory \(path) holds member '\(holder)' of group '\(held)', not member '\(member)' of group '\(group)': give each broker its own directory"
                )
            }
            term = UInt64(clamping: identity["term"]?.intValue ?? 0)
        } else if FileManager.default.fileExists(atPath: path + "/journal.log") {
            throw GroupSetupError(
                "the state directory \(path) holds a single broker's state, not a group member's: start a member with an empty directory (its copy comes from the leader)"
            )
        } else {
            term = 0
        }
        position = Self.readPosition(path + "/replica.position")
        self.group = group
        self.member = member
        try saveIdentity()
    }

    private let group: String
    private let member: String

    /// Takes `term` as the highest seen (kept on disk before anything of it is acknowledged).
    package func adopt(term newTerm: UInt64) {
        guard newTerm > term else { return }
        term = newTerm
        try? saveIdentity()
    }

    /// Applies one entry's operations and moves the position to it.
    /// - Throws: ``GroupSetupError`` when a write failed (the copy is then not to be trusted).
    package func apply(_ operations: [StateOperation], at newPosition: ReplicaPosition)
        throws(GroupSetupError)
    {
        for operation in operations {
            switch operation {
            case .appendJournal(let bytes):
                if let error = journal.append(bytes) { throw failure("append to journal.log", error) }
            case .rewriteJournal(let bytes):
                if let error = journal.rewrite(bytes) { throw failure("rewrite journal.log", error) }
            case .replace(let file, let bytes):
                try replace(file, bytes)
            case .beginTerm: break
            }
        }
        try move(to: newPosition)
    }

    /// The state files, for a snapshot: name and bytes of each that exists.
    package func snapshotFiles() -> [(name: String, bytes: [UInt8])] {
        StateOperation.files.compactMap { name in
            FileManager.default.contents(atPath: path + "/" + name).map { (name, Array($0)) }
        }
    }

    /// Replaces the state files with a snapshot's (files it does not hold are removed).
    /// - Throws: ``GroupSetupError`` when a write failed.
    package func install(_ files: [(name: String, bytes: [UInt8])], at newPosition: ReplicaPosition)
        throws(GroupSetupError)
    {
        for name in StateOperation.files {
            if let file = files.first(where: { $0.name == name }) {
                if name == "journal.log" {
                    if let error = journal.rewrite(file.bytes) { throw failure("write journal.log", error) }
                } else {
                    try replace(name, file.bytes)
                }
            } else {
                unlink(path + "/" + name)
            }
        }
        try move(to: newPosition)
    }

    private func replace(_ file: String, _ bytes: [UInt8]) throws(GroupSetupError) {
        do {
            try Data(bytes).write(to: URL(fileURLWithPath: path + "/" + file), options: .atomic)
        } catch {
            throw GroupSetupError("cannot write \(path)/\(file): \(error.localizedDescription)")
        }
    }

    private func move(to newPosition: ReplicaPosition) throws(GroupSetupError) {
        var bytes: [UInt8] = []
        for value in [newPosition.term, newPosition.index] {
            withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
        }
        let descriptor = open(path + "/replica.position", O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw failure("open replica.position", errno) }
        defer { close(descriptor) }
        let written = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        guard written == bytes.count else { throw failure("write replica.position", errno) }
        position = newPosition
    }

    private static func readPosition(_ file: String) -> ReplicaPosition {
        guard let data = FileManager.default.contents(atPath: file), data.count == 16 else { return .empty }
        let bytes = Array(data)
        func word(_ at: Int) -> UInt64 {
            bytes[at..<at + 8].enumerated().reduce(0) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
        }
        return ReplicaPosition(term: word(0), index: word(8))
    }

    private func saveIdentity() throws(GroupSetupError) {
        let document: JSONValue = [
            "group": .string(group), "member": .string(member), "term": .int(Int64(term)),
        ]
        try replace("group.json", JSONWriter.encode(document))
    }

    private func failure(_ what: String, _ error: Int32) -> GroupSetupError {
        GroupSetupError("cannot \(what) in \(path): \(String(cString: strerror(error)))")
    }
}

/// A group member cannot start or go on, said in one sentence (exit 1).
package struct GroupSetupError: Error, Sendable, CustomStringConvertible {
    package var message: String
    package init(_ message: String) { self.message = message }
    package var description: String { message }
}

import Glibc

/// The durable journal in the state directory (`journal.log`): records are appended with one
/// `write` each, before their event goes on the bus, so an event any subscriber saw survives a
/// `kill -9` of the broker (a machine crash may lose the last ones: the file is not synced).
/// Rewritten, through a temporary file and a rename, when it has grown past twice its content.
final class JournalFile {
    let path: String
    private var descriptor: Int32 = -1

    init(path: String) { self.path = path }

    deinit { if descriptor >= 0 { close(descriptor) } }

    /// The file's bytes, or none when it does not exist.
    static func read(_ path: String) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return [] }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            bytes += chunk[0..<count]
        }
        return bytes
    }

    /// Appends `record`; returns the error number when the write failed.
    func append(_ record: [UInt8]) -> Int32? {
        if descriptor < 0 {
            descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
            if descriptor < 0 { return errno }
        }
        return Self.write(record, to: descriptor)
    }

    /// Replaces the file with `records`; returns the error number when it failed.
    func rewrite(_ records: [UInt8]) -> Int32? {
        let temporary = path + ".tmp"
        let file = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        if file < 0 { return errno }
        if let error = Self.write(records, to: file) {
            close(file)
            unlink(temporary)
            return error
        }
        close(file)
        guard rename(temporary, path) == 0 else {
            let error = errno
            unlink(temporary)
            return error
        }
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
        return nil
    }

    private static func write(_ bytes: [UInt8], to descriptor: Int32) -> Int32? {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes {
                Glibc.write(descriptor, $0.baseAddress! + offset, bytes.count - offset)
            }
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { return errno }
            offset += written
        }
        return nil
    }
}

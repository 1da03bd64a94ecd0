import Glibc

/// Names the calling thread as ps and perf show it (Linux keeps at most 15 bytes).
public enum ThreadName {
    /// Sets the name of the calling thread.
    public static func set(_ name: String) {
        let descriptor = open("/proc/thread-self/comm", O_WRONLY)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }
}

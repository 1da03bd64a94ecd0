import Glibc

/// Gives freed heap memory back to the system (glibc's `malloc_trim`, looked up at run time: the
/// Glibc module does not declare it). A no-op where the C library has no such call.
package enum MemoryTrim {
    private typealias Trim = @convention(c) (Int) -> Int32

    private static let trim: Trim? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: Trim.self)
    }()

    /// Returns what the heap holds free to the system.
    package static func release() { _ = trim?(0) }
}

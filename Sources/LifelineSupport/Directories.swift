import Glibc

/// Making the directories a process keeps its state in, as `mkdir -p` does, with an error that says
/// what is in the way (Foundation's names only its error domain and code).
package enum Directories {
    /// A directory that could not be made, and why: one sentence.
    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    /// Creates `path` and its missing parents, new ones with `mode`; an existing directory is left
    /// as it is.
    /// - Throws: ``Failure`` naming `what` the directory is and what is in the way: a file where a
    ///   directory should be, or the system's reason.
    package static func create(_ path: String, what: String, mode: mode_t = 0o755) throws(Failure) {
        var built = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            let parent = built.isEmpty ? "/" : built
            built += "/" + component
            if mkdir(built, mode) == 0 || errno == EEXIST { continue }
            let reason =
                errno == ENOTDIR ? "\(parent) is a file, not a directory" : String(cString: strerror(errno))
            throw Failure(description: "cannot create \(what) \(path): \(reason)")
        }
        var status = stat()
        guard stat(path, &status) == 0 else {
            throw Failure(description: "cannot create \(what) \(path): \(String(cString: strerror(errno)))")
        }
        guard status.st_mode & S_IFMT == S_IFDIR else {
            throw Failure(description: "\(what) \(path) is a file, not a directory")
        }
    }
}

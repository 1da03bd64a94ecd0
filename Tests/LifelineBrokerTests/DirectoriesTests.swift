import Foundation
import LifelineSupport
import Testing

@Suite("Directories: made as mkdir -p does, refused with what is in the way")
struct DirectoriesTests {
    static func scratch() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("dirs-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        return path
    }

    @Test("missing parents are made; an existing directory is left as it is")
    func makes() throws {
        let root = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        try Directories.create(root + "/a/b/c", what: "the state directory")
        try Directories.create(root + "/a/b/c", what: "the state directory")
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: root + "/a/b/c", isDirectory: &isDirectory))
        #expect(isDirectory.boolValue)
        try Directories.create(root + "/keys", what: "the key directory", mode: 0o700)
        let mode = try FileManager.default.attributesOfItem(atPath: root + "/keys")[.posixPermissions] as? Int
        #expect(mode == 0o700)
    }

    @Test("a file where the directory, or one of its parents, should be is named in one sentence")
    func fileInTheWay() throws {
        let root = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        #expect(FileManager.default.createFile(atPath: root + "/file", contents: Data()))
        #expect {
            try Directories.create(root + "/file", what: "the state directory")
        } throws: {
            "\($0)" == "the state directory \(root)/file is a file, not a directory"
        }
        #expect {
            try Directories.create(root + "/file/sub/x", what: "the run directory")
        } throws: {
            "\($0)"
                == "cannot create the run directory \(root)/file/sub/x: \(root)/file is a file, not a directory"
        }
    }
}

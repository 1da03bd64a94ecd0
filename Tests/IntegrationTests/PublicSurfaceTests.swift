import Foundation
import Testing

/// What `import Lifeline` gives a service author, checked against `Lifeline.api` beside this file,
/// so that the surface grows only on purpose. The list comes from the built module, with the
/// toolchain's `swift-symbolgraph-extract`. After a deliberate change, write the new list with
/// `LIFELINE_UPDATE_API=1 swift test --filter PublicSurfaceTests` and commit it.
@Suite("The public surface of the Lifeline module", .timeLimit(.minutes(1)))
struct PublicSurfaceTests {
    static let listFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Lifeline.api")

    /// The package's root: the first folder above the test binary that holds Package.swift.
    static func packageRoot() throws -> URL {
        var folder = Executables.directory
        while folder.path != "/" {
            if FileManager.default.fileExists(atPath: folder.appendingPathComponent("Package.swift").path) {
                return folder
            }
            folder.deleteLastPathComponent()
        }
        throw HarnessError("no Package.swift above \(Executables.directory.path)")
    }

    /// The toolchain's swift-symbolgraph-extract, found on PATH.
    static func extractor() throws -> URL {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for folder in path.split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(folder)).appendingPathComponent(
                "swift-symbolgraph-extract")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        throw HarnessError("swift-symbolgraph-extract is not on PATH (it comes with the Swift toolchain)")
    }

    /// One line per public symbol that `import Lifeline` gives: the module's own and those of the wire
    /// module it re-exports (whose public types are the vocabulary only), each as its kind and path.
    static func publicSymbols() throws -> [String] {
        var lines: Set<String> = []
        for module in ["Lifeline", "LifelineProtocol"] { lines.formUnion(try publicSymbols(of: module)) }
        return lines.sorted()
    }

    /// The public symbols of one module.
    static func publicSymbols(of module: String) throws -> Set<String> {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lifeline-symbols-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: output) }
        let process = Process()
        process.executableURL = try extractor()
        process.arguments = [
            "-module-name", module, "-I", Executables.directory.appendingPathComponent("Modules").path,
            "-Xcc",
            "-fmodule-map-file=\(try packageRoot().appendingPathComponent("Sources/CZeroMQ/module.modulemap").path)",
            "-target", "x86_64-unknown-linux-gnu", "-minimum-access-level", "public", "-output-dir",
            output.path,
        ]
        let errors = Pipe()
        process.standardError = errors
        try ChildProcess.spawning.withLock { _ in try process.run() }
        process.waitUntilExit()
        let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        guard process.terminationStatus == 0 else { throw HarnessError("swift-symbolgraph-extract: \(said)") }
        var lines: Set<String> = []
        for file in try FileManager.default.contentsOfDirectory(atPath: output.path)
        where file.hasSuffix(".json") {
            let data = try Data(contentsOf: output.appendingPathComponent(file))
            let graph = try JSONSerialization.jsonObject(with: data) as? [String: Any]
            for symbol in graph?["symbols"] as? [[String: Any]] ?? [] {
                let kind = ((symbol["kind"] as? [String: Any])?["identifier"] as? String) ?? "?"
                let path = (symbol["pathComponents"] as? [String] ?? []).joined(separator: ".")
                lines.insert("\(kind.replacingOccurrences(of: "swift.", with: "")) \(path)")
            }
        }
        return lines
    }

    /// The top-level types and aliases among `symbols`.
    static func topLevelTypes(_ symbols: [String]) -> Set<String> {
        var types: Set<String> = []
        for line in symbols {
            let parts = line.split(separator: " ", maxSplits: 1)
            if parts.count == 2,
                ["struct", "class", "enum", "protocol", "typealias", "actor"].contains(String(parts[0])),
                !parts[1].contains(".")
            {
                types.insert(String(parts[1]))
            }
        }
        return types
    }

    @Test("the public symbols of Lifeline are exactly those listed in Lifeline.api")
    func surfaceIsListed() throws {
        let symbols = try Self.publicSymbols()
        let text = symbols.joined(separator: "\n") + "\n"
        if ProcessInfo.processInfo.environment["LIFELINE_UPDATE_API"] == "1" {
            try Data(text.utf8).write(to: Self.listFile)
        }
        let listed = (try? String(contentsOf: Self.listFile, encoding: .utf8)) ?? ""
        let expected = listed.split(separator: "\n").map(String.init)
        let added = Set(symbols).subtracting(expected).sorted()
        let removed = Set(expected).subtracting(symbols).sorted()
        #expect(
            added.isEmpty && removed.isEmpty,
            "the public surface changed: added \(added), removed \(removed); if that is meant, run LIFELINE_UPDATE_API=1 swift test --filter PublicSurfaceTests and commit Tests/IntegrationTests/Lifeline.api"
        )
        let types = Self.topLevelTypes(symbols)
        print(
            "Lifeline's public surface: \(symbols.count) symbols, \(types.count) top-level types and aliases")
        #expect(types.count <= 35, "import Lifeline shows \(types.count) top-level types: \(types.sorted())")
        #expect(
            !symbols.contains { $0.hasPrefix("typealias ") && !$0.contains(".") }, "a top-level typealias")
    }

    @Test("the README's vocabulary names exactly the top-level types of import Lifeline")
    func readmeListsTheVocabulary() throws {
        let readme = try String(
            contentsOf: try Self.packageRoot().appendingPathComponent("README.md"), encoding: .utf8)
        guard let start = readme.range(of: "<!-- vocabulary -->"),
            let end = readme.range(of: "<!-- /vocabulary -->", range: start.upperBound..<readme.endIndex)
        else { throw HarnessError("README.md has no <!-- vocabulary --> … <!-- /vocabulary --> block") }
        var named: Set<String> = []
        for piece in readme[start.upperBound..<end.lowerBound].split(separator: "`").enumerated()
        where piece.offset % 2 == 1 {
            named.insert(String(piece.element))
        }
        let types = Self.topLevelTypes(try Self.publicSymbols())
        #expect(
            named == types,
            "README names \(named.subtracting(types).sorted()) that import Lifeline lacks, and lacks \(types.subtracting(named).sorted())"
        )
    }
}

import Foundation
import Testing

@Suite("The README's code is the code the tests compile", .timeLimit(.minutes(1)))
struct ReadmeCodeTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// The lines of `text` that say something, without their indentation.
    static func lines(_ text: some StringProtocol) -> [String] {
        text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    @Test("\"Writing a service\" matches ReadmeServiceSnippet line for line (its function frame aside)")
    func writingAService() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let start = try #require(readme.range(of: "```swift\nimport Lifeline\n\nstruct CartDidChange"))
        let block = readme[start.lowerBound...].dropFirst("```swift\n".count)
        let end = try #require(block.range(of: "\n```"))
        let documented = Self.lines(block[..<end.lowerBound]).filter { $0 != "import Lifeline" }

        let source = try String(
            contentsOf: Self.root.appendingPathComponent("Tests/ExampleTests/ReadmeServiceSnippet.swift"),
            encoding: .utf8)
        let begin = try #require(source.range(of: "// README begin\n"))
        let finish = try #require(source.range(of: "// README end"))
        let compiled = Self.lines(source[begin.upperBound..<finish.lowerBound]).filter {
            $0 != "static func main() async {"
        }
        #expect(compiled == documented)
    }
}

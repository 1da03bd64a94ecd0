/// What the supervisor reads off a process's READY line, and how it starts that process again with
/// what the line said.
enum ReadyLine {
    /// The `key=value` fields of a READY line.
    static func fields(_ line: String) -> [String: String] {
        var fields: [String: String] = [:]
        for word in line.split(separator: " ") {
            let parts = word.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { fields[String(parts[0])] = String(parts[1]) }
        }
        return fields
    }

    /// A broker's `arguments` with the `--control` and `--bus` its READY line's `fields` say it bound;
    /// nil when the line does not say both.
    static func binding(_ fields: [String: String], in arguments: [String]) -> [String]? {
        guard let control = fields["control"], let bus = fields["bus"] else { return nil }
        return replacing(["--control": control, "--bus": bus], in: arguments)
    }

    /// `arguments` with the value after each option of `values` replaced.
    static func replacing(_ values: [String: String], in arguments: [String]) -> [String] {
        var result = arguments
        for index in result.indices.dropLast() {
            if let value = values[result[index]] { result[index + 1] = value }
        }
        return result
    }
}

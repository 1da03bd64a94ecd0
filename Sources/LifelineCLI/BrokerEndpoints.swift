import LifelineSupport

/// The endpoints `lifeline broker` binds, as `--control` and `--bus` give them.
enum BrokerEndpoints {
    /// The comma-separated `list` given as `option`.
    /// - Throws: ``UsageError`` when it is empty or names an endpoint a broker cannot bind as given.
    static func parse(_ list: String, _ option: String) throws(UsageError) -> [String] {
        let items = list.split(separator: ",").map { String($0) }
        guard !items.isEmpty else { throw UsageError("\(option) needs at least one endpoint") }
        for item in items where bindProblem(item) {
            throw UsageError(
                "\(option): '\(item)' is not a tcp://HOST:PORT (PORT 0-65535, or * for any), ipc://PATH or inproc://NAME endpoint"
            )
        }
        return items
    }

    /// Whether `endpoint` is not one a broker can bind.
    private static func bindProblem(_ endpoint: String) -> Bool {
        for prefix in ["ipc://", "inproc://"] where endpoint.hasPrefix(prefix) {
            return endpoint.count == prefix.count
        }
        guard endpoint.hasPrefix("tcp://"), let colon = endpoint.lastIndex(of: ":"),
            endpoint.distance(from: endpoint.startIndex, to: colon) > 6
        else { return true }
        let port = endpoint[endpoint.index(after: colon)...]
        return port != "*" && UInt16(port) == nil
    }
}

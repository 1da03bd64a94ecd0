/// What a broker's address must look like: `tcp://HOST:PORT` or `ipc://PATH` (or `inproc://NAME`
/// inside one process), and a group's members as a comma-separated list of them.
package enum Endpoint {
    /// Why `endpoint` cannot name a broker; nil when it can.
    package static func problem(_ endpoint: String) -> String? {
        let expected = "expected tcp://HOST:PORT or ipc://PATH, not '\(endpoint)'"
        if endpoint.hasPrefix("ipc://") || endpoint.hasPrefix("inproc://") {
            return endpoint.split(separator: "/", omittingEmptySubsequences: false).count > 2
                && !endpoint.hasSuffix("://") ? nil : expected
        }
        guard endpoint.hasPrefix("tcp://") else { return expected }
        let address = endpoint.dropFirst(6)
        guard let colon = address.lastIndex(of: ":"), colon != address.startIndex else { return expected }
        let port = address[address.index(after: colon)...]
        guard let number = Int(port), (1...65535).contains(number) else { return expected }
        return nil
    }

    /// Why the comma-separated `list` of endpoints cannot name a broker or a group's members; nil
    /// when every one can.
    package static func problem(inList list: String) -> String? {
        let endpoints = list.split(separator: ",", omittingEmptySubsequences: false)
        return endpoints.lazy.compactMap { problem(String($0)) }.first
    }
}

import Foundation
import Glibc

/// One HTTP/1.1 request as Lifeline's small servers read it: one request per connection.
package struct HTTPRequest: Sendable, Equatable {
    package var method: String
    /// The request target as sent, e.g. `/tail?pattern=did*`.
    package var target: String
    /// The target's path, e.g. `/tail`.
    package var path: String
    /// The target's query, percent-decoded (`+` is a space); a repeated name keeps its last value.
    package var query: [String: String]
    /// Header values by lowercased name; a repeated header keeps its last value.
    package var headers: [String: String]
    package var body: [UInt8]

    package init(
        method: String, target: String, path: String, query: [String: String], headers: [String: String],
        body: [UInt8]
    ) {
        self.method = method
        self.target = target
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }

    /// The value of header `name` (any case).
    package func header(_ name: String) -> String? { headers[name.lowercased()] }

    /// The value of cookie `name` in the `Cookie` header.
    package func cookie(_ name: String) -> String? {
        for pair in (header("cookie") ?? "").split(separator: ";") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == name {
                return parts[1].trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }

    /// Headers a request may carry once only (lowercased name → as named in the refusal).
    static let single = [
        "host": "Host", "origin": "Origin", "x-lifeline-token": "X-Lifeline-Token", "cookie": "Cookie",
        "authorization": "Authorization",
    ]

    /// The values of cookie `name` in the `Cookie` header, in order (a browser may send one name
    /// twice, for two paths).
    package func cookies(_ name: String) -> [String] {
        (header("cookie") ?? "").split(separator: ";").compactMap { pair in
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == name else { return nil }
            return parts[1].trimmingCharacters(in: .whitespaces)
        }
    }

    /// Parses a request's head: the request line and headers, without the blank line that ends them.
    /// - Throws: ``HTTPError`` (400) when the request line or a header is malformed, or the version
    ///   is not HTTP/1.x.
    package static func parse(head: String) throws(HTTPError) -> HTTPRequest {
        var lines = head.split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
        let requestLine = lines.isEmpty ? "" : lines.removeFirst()
        let parts = requestLine.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, parts[1].hasPrefix("/") else {
            throw HTTPError(
                400, "expected a request line 'METHOD /PATH HTTP/1.1', not '\(requestLine.prefix(80))'")
        }
        guard parts[2] == "HTTP/1.1" || parts[2] == "HTTP/1.0" else {
            throw HTTPError(400, "only HTTP/1.0 and HTTP/1.1 are spoken here, not '\(parts[2].prefix(20))'")
        }
        var headers: [String: String] = [:]
        for line in lines where !line.isEmpty {
            // A name is a token: no white space in it, none before the colon (RFC 9112, 5.1).
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex,
                !line[..<colon].contains(where: \.isWhitespace)
            else {
                throw HTTPError(400, "a header line needs 'Name: value', not '\(line.prefix(80))'")
            }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            // Two lengths that disagree leave the body's end unknown (RFC 9112, 6.3).
            if name == "content-length", let earlier = headers[name], earlier != value {
                throw HTTPError(400, "Content-Length is given twice, as \(earlier) and \(value)")
            }
            // Which of two hosts was meant is anyone's guess (RFC 9112, 3.2); nor is which of two
            // origins, tokens or cookie headers the access checks should believe.
            if let named = Self.single[name], headers[name] != nil {
                throw HTTPError(400, "\(named) is given twice")
            }
            headers[name] = value
        }
        let target = String(parts[1])
        let pieces = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var query: [String: String] = [:]
        if pieces.count == 2 {
            for pair in pieces[1].split(separator: "&") {
                let nameAndValue = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let decode = { (text: Substring) in
                    String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding
                        ?? String(text)
                }
                query[decode(nameAndValue[0])] = nameAndValue.count == 2 ? decode(nameAndValue[1]) : ""
            }
        }
        return HTTPRequest(
            method: String(parts[0]), target: target, path: String(pieces[0]), query: query, headers: headers,
            body: [])
    }

    /// Reads one request from a connected socket: the head (at most `maxHead` bytes) and a body of
    /// `Content-Length` bytes (at most `maxBody`), all of it within `timeoutSeconds` of the first
    /// read — however it trickles in.
    /// `admit` sees the head first: what it refuses is refused before anything about the body is
    /// said, so a stranger learns nothing from the body's limits.
    /// - Throws: ``HTTPError``: what `admit` returned; 400 for a malformed request or a connection
    ///   closed early, 408 when the client is too slow, 411 for a chunked body, 413 for a body that is
    ///   too large, 431 for a head that is too large.
    package static func read(
        from descriptor: Int32, maxHead: Int = 16_384, maxBody: Int = 65_536, timeoutSeconds: Int = 10,
        admit: (HTTPRequest) -> HTTPError? = { _ in nil }
    ) throws(HTTPError) -> HTTPRequest {
        let deadline = SystemClock.monotonicNanoseconds() &+ UInt64(timeoutSeconds) * 1_000_000_000
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 8192)
        func receive() throws(HTTPError) {
            // Each read may wait only what is left of the whole request's time: a client that sends
            // a byte now and then cannot hold the connection.
            let now = SystemClock.monotonicNanoseconds()
            guard now < deadline else {
                throw HTTPError(408, "the request did not arrive within \(timeoutSeconds) s")
            }
            let left = deadline - now
            var timeout = timeval(
                tv_sec: Int(left / 1_000_000_000), tv_usec: max(1000, Int(left % 1_000_000_000 / 1000)))
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                throw HTTPError(408, "the request did not arrive within \(timeoutSeconds) s")
            }
            guard count > 0 else {
                throw HTTPError(400, "the connection closed before the request was complete")
            }
            bytes += buffer[0..<count]
        }
        var headEnd: Int?
        while headEnd == nil {
            try receive()
            headEnd = Self.endOfHead(in: bytes)
            // However the head arrived (in one read or many), it may not be longer than maxHead.
            if (headEnd ?? bytes.count) > maxHead {
                throw HTTPError(431, "the request's head is over \(maxHead) bytes")
            }
        }
        let end = headEnd!
        var request = try parse(head: String(decoding: bytes[..<end], as: UTF8.self))
        if let refusal = admit(request) { throw refusal }
        if request.header("transfer-encoding") != nil {
            throw HTTPError(411, "a chunked request body is not accepted; send it with Content-Length")
        }
        let declared = request.header("content-length").map { Int($0) } ?? 0
        guard let length = declared, length >= 0 else {
            throw HTTPError(400, "Content-Length must be a number of bytes")
        }
        guard length <= maxBody else { throw HTTPError(413, "the body is over \(maxBody) bytes") }
        while bytes.count - (end + 4) < length { try receive() }
        request.body = Array(bytes[(end + 4)..<(end + 4 + length)])
        return request
    }

    /// The index of the blank line (`\r\n\r\n`) that ends the head, if it has arrived.
    package static func endOfHead(in bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4)
        where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10
        {
            return index
        }
        return nil
    }
}

/// Why a request cannot be served: its HTTP status and a sentence for the client.
package struct HTTPError: Error, Sendable, Equatable {
    package var status: Int
    package var message: String

    package init(_ status: Int, _ message: String) {
        self.status = status
        self.message = message
    }
}

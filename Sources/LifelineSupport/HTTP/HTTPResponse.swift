import Glibc

/// One HTTP/1.1 response, sent with `Connection: close`.
package struct HTTPResponse: Sendable {
    package var status: Int
    /// Extra headers, in order (`Content-Length` and `Connection` are added when sent).
    package var headers: [(name: String, value: String)]
    package var body: [UInt8]

    package init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A plain-text response: `text` and a newline.
    package static func text(_ status: Int, _ text: String) -> HTTPResponse {
        HTTPResponse(
            status: status, headers: [("Content-Type", "text/plain; charset=utf-8")],
            body: Array((text + "\n").utf8))
    }

    /// The standard reason phrase of the statuses Lifeline's servers send.
    package static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 204: "No Content"
        case 303: "See Other"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 411: "Length Required"
        case 413: "Content Too Large"
        case 421: "Misdirected Request"
        case 431: "Request Header Fields Too Large"
        case 503: "Service Unavailable"
        default: status < 400 ? "OK" : (status < 500 ? "Bad Request" : "Internal Server Error")
        }
    }

    /// The status line and headers, ending with the blank line.
    package var head: String {
        var text = "HTTP/1.1 \(status) \(Self.reason(status))\r\n"
        for header in headers { text += "\(header.name): \(header.value)\r\n" }
        return text + "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
    }

    /// Writes the response to `descriptor` (without the body for HEAD); false when the peer is gone.
    @discardableResult
    package func send(to descriptor: Int32, includingBody: Bool = true) -> Bool {
        HTTPResponse.write(Array(head.utf8) + (includingBody ? body : []), to: descriptor)
    }

    /// Writes all of `bytes` to `descriptor` without raising SIGPIPE; false when the peer is gone.
    package static func write(_ bytes: [UInt8], to descriptor: Int32) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return false }
            sent += count
        }
        return true
    }

    /// True when `given` equals `expected`, compared in time that does not depend on where they differ.
    package static func secretsMatch(_ given: String, _ expected: String) -> Bool {
        let given = Array(given.utf8)
        let expected = Array(expected.utf8)
        var difference = given.count ^ expected.count
        for index in expected.indices {
            difference |= Int(expected[index] ^ (index < given.count ? given[index] : 0))
        }
        return difference == 0
    }
}

/// The status code of every reply, HTTP style: 2xx success, 4xx the request was wrong, 5xx the runtime
/// or the service failed.
public struct Status: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    public static let ok = Status(rawValue: 200)
    public static let badRequest = Status(rawValue: 400)
    public static let forbidden = Status(rawValue: 403)
    public static let notFound = Status(rawValue: 404)
    public static let conflict = Status(rawValue: 409)
    public static let payloadTooLarge = Status(rawValue: 413)
    public static let unprocessable = Status(rawValue: 422)
    /// One of the broker's limits would be passed (names per connection, event names, …).
    public static let tooMany = Status(rawValue: 429)
    public static let internalError = Status(rawValue: 500)
    public static let unavailable = Status(rawValue: 503)
    public static let timeout = Status(rawValue: 504)
    public static let versionNotSupported = Status(rawValue: 505)

    /// True for 2xx.
    public var isSuccess: Bool { (200..<300).contains(rawValue) }

    /// A short phrase for the code.
    public var reason: String {
        switch rawValue {
        case 200: "ok"
        case 400: "bad request"
        case 401: "unauthorized"
        case 403: "forbidden"
        case 404: "not found"
        case 409: "conflict"
        case 413: "payload too large"
        case 422: "unprocessable"
        case 429: "too many"
        case 500: "internal error"
        case 503: "unavailable"
        case 504: "timeout"
        case 505: "protocol version not supported"
        default: "status \(rawValue)"
        }
    }

    /// `404 not found`; a code without a phrase here is only its number.
    public var description: String {
        reason == "status \(rawValue)" ? "\(rawValue)" : "\(rawValue) \(reason)"
    }
}

extension Status: ExpressibleByIntegerLiteral {
    /// A status written as its number, so that `error.status == 404` reads as it should.
    public init(integerLiteral value: Int) { self.init(rawValue: value) }
}

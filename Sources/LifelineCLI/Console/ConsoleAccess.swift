import LifelineSupport

/// Who may read the console and who may act through it.
///
/// - Reading (the page, its streams, its JSON): on a loopback address, any local client whose
///   `Host` header names this console (a page served under another name may be a DNS-rebinding
///   attack) and whose `Origin`, when it sends one, is this console's (another site's page may not
///   open a stream: a trace stream takes a TRACE lease); with a token file, only a request carrying the token (the `lifeline_console` cookie,
///   set when the page is opened once with `?token=`, or the `X-Lifeline-Token` header).
/// - Acting (publish, call, apps): a `POST` carrying the token in `X-Lifeline-Token`, from this
///   console's own origin. The page has the token; a page of another site cannot read it, and its
///   requests cannot carry the header without a preflight this console never answers.
struct ConsoleAccess: Sendable {
    static let cookie = "lifeline_console"
    static let header = "X-Lifeline-Token"

    let token: String
    /// True when the token was given (`--token-file`): then reading needs it too.
    let tokenForReading: Bool
    /// The `Host` values accepted; nil accepts any (a console listening beyond loopback has a token).
    let hosts: Set<String>?

    /// The rules for a console bound to `address` (`HOST:PORT` as bound).
    init(token: String, tokenForReading: Bool, address: String, loopback: Bool) {
        self.token = token
        self.tokenForReading = tokenForReading
        if loopback, let port = address.split(separator: ":").last {
            hosts = ["127.0.0.1:\(port)", "localhost:\(port)", "[::1]:\(port)", address]
        } else {
            hosts = nil
        }
    }

    /// Why `request` may not read; nil when it may.
    func readRefusal(_ request: HTTPRequest) -> HTTPError? {
        if let hosts, !hosts.contains(request.header("host") ?? "") {
            return HTTPError(
                421,
                "this console answers only to Host \(hosts.sorted().joined(separator: " or ")), not '\(request.header("host") ?? "")'"
            )
        }
        // A page of another site may not read either, nor open a stream (a trace lease has effects).
        if let origin = request.header("origin"), origin != "http://\(request.header("host") ?? "")" {
            return HTTPError(403, "a request from another site (\(origin)) may not read this console")
        }
        // A browser says where a request without Origin comes from (an <img> or <script> tag).
        if let site = request.header("sec-fetch-site"), site != "same-origin" && site != "none" {
            return HTTPError(
                403, "a request from another site (Sec-Fetch-Site: \(site)) may not read this console")
        }
        guard tokenForReading else { return nil }
        // Any of the ways a token comes that holds the right one: a stale cookie beside a fresh
        // ?token= (the token file changed) must not lock the browser out.
        let given =
            request.cookies(Self.cookie)
            + [request.header(Self.header), request.query["token"]].compactMap { $0 }
        guard given.contains(where: { HTTPResponse.secretsMatch($0, token) }) else {
            return HTTPError(
                401,
                "this console needs its token: open it once as /?token=TOKEN, the contents of its --token-file"
            )
        }
        return nil
    }

    /// Why `request` may not act; nil when it may.
    func actionRefusal(_ request: HTTPRequest) -> HTTPError? {
        if let origin = request.header("origin"), origin != "http://\(request.header("host") ?? "")" {
            return HTTPError(403, "a request from another site (\(origin)) may not act through this console")
        }
        if let refusal = readRefusal(request) { return refusal }
        guard request.method == "POST" else { return HTTPError(405, "an action is a POST") }
        guard HTTPResponse.secretsMatch(request.header(Self.header) ?? "", token) else {
            return HTTPError(
                403, "an action needs the console's token in the \(Self.header) header (the page sends it)")
        }
        return nil
    }
}

import LifelineProtocol

/// A stack operation waiting its turn: the broker runs one at a time, so callbacks of different
/// operations never interleave.
enum AppOperation {
    /// An APPS request from a client or a session's router, with the sender's id for it if any.
    case request(AppsRequest, peer: [UInt8], id: [UInt8], operationID: String?)
    /// A host died (or one `instance` of it): its sessions leave the stack.
    case crash(host: String, instance: String? = nil)
    /// A host stopped cleanly: its sessions stay, detached, until it registers again.
    case detach(host: String)
    /// A host (or one `instance` of it) registered: its sessions restored from disk come back; an
    /// instance also takes those of instances that did not come back (`adopting`).
    case attach(host: String, instance: String? = nil, adopting: Bool = false)
    /// One instance of a host stopped cleanly while another (`to`) runs: its sessions move there.
    case move(host: String, from: String, to: String)
    /// Start the configured Launcher.
    case launch
}

/// The operation in progress: interceptors first (starts), the veto (normal exits), then the
/// callbacks, one at a time, each answered before the next is sent.
struct AppTransition {
    enum Stage { case intercepting, vetoing, delivering }

    /// The callback, interceptor or veto the operation waits on.
    struct Awaiting {
        /// The correlator wait.
        var id: [UInt8]
        var service: String
        /// The connection it went to.
        var peer: [UInt8] = []
        var what: String
        /// The callback waited for, when it is one (not an interception or a veto).
        var callback: AppCallback? = nil
    }

    var operation: AppOperation
    var stage: Stage
    /// A start request, as interceptors may change it.
    var start: AppStart?
    var interceptors: [String] = []
    var exit: (session: String, result: JSONValue?, animated: Bool)?
    var callbacks: [AppCallback] = []
    /// The callbacks have ids and the change is saved (before the first callback is sent).
    var committed = false
    var next = 0
    var awaiting: Awaiting?
    var outcome = SessionStack.Outcome()
    /// The host's own reply to an `action`, passed through unchanged.
    var actionReply: ControlReply?
    var failure: (status: Status, message: String)?
}

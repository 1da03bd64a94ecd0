/// How a micro-app is shown when it starts (mPaaS's launch modes).
public enum LaunchMode: String, Sendable, CaseIterable {
    case pushWithAnimation, pushNoAnimation, presentWithAnimation, presentNoAnimation

    /// True for the present modes (modal flows, closed with dismiss).
    public var isPresentation: Bool { self == .presentWithAnimation || self == .presentNoAnimation }
    public var isAnimated: Bool { self == .pushWithAnimation || self == .presentWithAnimation }
}

/// Where a micro-app session stands.
public enum SessionState: String, Sendable, CaseIterable {
    /// Being created and launched.
    case launching
    /// On top of the stack, what the user sees.
    case running
    /// Below the top.
    case paused
    /// Restored from disk after a broker restart, waiting for its host to register again.
    case detached
}

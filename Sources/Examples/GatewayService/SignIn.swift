import GatewayAPI

/// Who is signed in: the state the gateway's actor and its start interceptor share.
actor SignIn {
    private(set) var user: String?

    /// - Throws: ``SignInRefused`` for an empty user or a password shorter than 4 characters.
    func signIn(user: String, password: String) throws(SignInRefused) {
        guard !user.isEmpty, password.count >= 4 else {
            throw SignInRefused(
                user: user, reason: "wrong user or password (any user, a password of at least 4 characters)")
        }
        self.user = user
    }

    func signOut() { user = nil }

    var state: SignInState { SignInState(signedIn: user != nil, user: user) }
}

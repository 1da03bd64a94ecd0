// lifeline-gateway: holds the sign-in state (the coordinator article's Gateway) as a distributed
// actor, and guards starts: while nobody is signed in, starting `home` becomes starting `login`.
import Lifeline

await GatewayService.make()
    .main(
        about:
            "Holds the sign-in state: the distributed actor SignInGateway (funcs state, signIn {user, password}, signOut, waitForSignIn {seconds}); redirects home to login when signed out; while signed in it also serves 'account' (method profile)."
    )

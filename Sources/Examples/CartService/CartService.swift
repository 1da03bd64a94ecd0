import Lifeline

/// lifeline-cart's service: a cart per user as an actor by key (`cart/ana`), on any number of
/// instances. Made here so that a test can run it against LifelineTesting's in-memory broker.
enum CartService {
    /// The service; an idle cart is deactivated after `idleAfter`.
    static func make(idleAfter: Duration = .seconds(60), store: CartStore = CartStore()) -> Service {
        Service("cart")
            .actors(
                idleAfter: idleAfter,
                deactivate: { (cart: Cart) in
                    try await cart.whenLocal { cart in
                        try cart.save()
                        store.record("stop", cart.user)
                    }
                }
            ) { user, context in
                let cart = try Cart(user: user, store: store, actorSystem: context.actorSystem)
                store.record("start", user)
                return cart
            }
    }
}

// lifeline-cart: a cart per user, each an actor by key (`lifeline call cart/ana add item=tea quantity=2`).
import Lifeline

await CartService.make()
    .main(about: "A cart per user, each a distributed actor by key ('cart/USER'); run as many as you like.")

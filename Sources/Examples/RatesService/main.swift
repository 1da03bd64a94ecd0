// lifeline-rates: converts currencies; a replicable service (run several with the same name).
import Lifeline

await RatesService.make()
    .main(about: "Converts amounts between currencies ('convert'); replicable: run as many as you like.")

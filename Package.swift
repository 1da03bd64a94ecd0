// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Lifeline",
    products: [
        .library(name: "ZeroMQ", targets: ["ZeroMQ"]),
        .library(name: "LifelineProtocol", targets: ["LifelineProtocol"]),
    ],
    targets: [
        .systemLibrary(
            name: "CZeroMQ",
            pkgConfig: "libzmq",
            providers: [.apt(["libzmq3-dev"])]
        ),
        .target(name: "ZeroMQ", dependencies: ["CZeroMQ"]),
        .target(name: "LifelineProtocol"),
        .target(name: "LifelineBroker", dependencies: ["LifelineProtocol", "ZeroMQ"]),
        .testTarget(name: "ZeroMQTests", dependencies: ["ZeroMQ"]),
        .testTarget(name: "LifelineProtocolTests", dependencies: ["LifelineProtocol"]),
        .testTarget(name: "LifelineBrokerTests", dependencies: ["LifelineBroker"]),
    ],
    swiftLanguageModes: [.v6]
)

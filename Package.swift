// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Lifeline",
    products: [
        .library(name: "ZeroMQ", targets: ["ZeroMQ"]),
    ],
    targets: [
        .systemLibrary(
            name: "CZeroMQ",
            pkgConfig: "libzmq",
            providers: [.apt(["libzmq3-dev"])]
        ),
        .target(name: "ZeroMQ", dependencies: ["CZeroMQ"]),
        .testTarget(name: "ZeroMQTests", dependencies: ["ZeroMQ"]),
    ],
    swiftLanguageModes: [.v6]
)

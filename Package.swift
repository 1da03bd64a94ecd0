// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Lifeline",
    products: [
        .library(name: "ZeroMQ", targets: ["ZeroMQ"]),
        .library(name: "Lifeline", targets: ["Lifeline"]),
        .library(name: "LifelineTesting", targets: ["LifelineTesting"]),
        .executable(name: "lifeline", targets: ["lifeline"]),
    ],
    targets: [
        // libzmq's header and library are in the compiler's default paths on Debian (libzmq3-dev,
        // which deploy/setup.sh installs): no pkg-config, whose Cflags (from krb5's .pc) every
        // dependent build would warn about.
        .systemLibrary(name: "CZeroMQ"),
        .target(name: "ZeroMQ", dependencies: ["CZeroMQ"]),
        .target(name: "LifelineProtocol"),
        .target(name: "LifelineSupport", dependencies: ["LifelineProtocol"]),
        .target(name: "Lifeline", dependencies: ["ZeroMQ", "LifelineProtocol", "LifelineSupport"]),
        .target(name: "LifelineTesting", dependencies: ["Lifeline", "LifelineProtocol"]),
        .target(name: "LifelineBroker", dependencies: ["ZeroMQ", "LifelineProtocol", "LifelineSupport"]),
        .target(
            name: "LifelineCLI",
            dependencies: ["Lifeline", "LifelineBroker", "LifelineProtocol", "LifelineSupport", "ZeroMQ"]),
        .executableTarget(name: "lifeline", dependencies: ["LifelineCLI"]),
        .executableTarget(
            name: "lifeline-push", dependencies: ["Lifeline"], path: "Sources/Examples/PushService"),
        .executableTarget(
            name: "lifeline-analytics", dependencies: ["Lifeline"], path: "Sources/Examples/AnalyticsService"),
        .executableTarget(
            name: "lifeline-url", dependencies: ["Lifeline"], path: "Sources/Examples/URLService"),
        .executableTarget(
            name: "lifeline-rates", dependencies: ["Lifeline"], path: "Sources/Examples/RatesService"),
        .executableTarget(
            name: "lifeline-probe", dependencies: ["Lifeline", "LifelineSupport"],
            path: "Sources/Examples/ProbeService"),
        .target(name: "GatewayAPI", path: "Sources/Examples/GatewayAPI"),
        .executableTarget(
            name: "lifeline-gateway", dependencies: ["Lifeline", "GatewayAPI"],
            path: "Sources/Examples/GatewayService"),
        .target(name: "CartAPI", path: "Sources/Examples/CartAPI"),
        .executableTarget(
            name: "lifeline-cart", dependencies: ["Lifeline", "LifelineSupport", "CartAPI"],
            path: "Sources/Examples/CartService"),
        .executableTarget(
            name: "lifeline-shell", dependencies: ["Lifeline", "GatewayAPI"],
            path: "Sources/Examples/ShellHost"),
        .executableTarget(
            name: "lifeline-bench",
            dependencies: [
                "Lifeline", "LifelineBroker", "LifelineCLI", "LifelineProtocol", "LifelineSupport",
                "LifelineTesting", "ZeroMQ",
            ],
            path: "bench/Sources/LifelineBench"),
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "ZeroMQTests", dependencies: ["ZeroMQ"]),
        .testTarget(name: "LifelineProtocolTests", dependencies: ["LifelineProtocol", "TestSupport"]),
        .testTarget(
            name: "LifelineBrokerTests",
            dependencies: ["LifelineBroker", "LifelineProtocol", "LifelineSupport", "TestSupport", "ZeroMQ"]),
        .testTarget(
            name: "LifelineCLITests", dependencies: ["LifelineCLI", "LifelineProtocol", "LifelineSupport"]),
        .testTarget(
            name: "LifelineTests",
            dependencies: ["Lifeline", "LifelineCLI", "LifelineProtocol", "LifelineSupport", "TestSupport"]),
        .testTarget(
            name: "ExampleTests",
            dependencies: [
                "LifelineTesting", "Lifeline", "LifelineProtocol", "TestSupport", "GatewayAPI",
                "lifeline-url",
                "lifeline-push",
                "lifeline-gateway", "lifeline-rates", "CartAPI", "lifeline-cart",
            ]),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "Lifeline", "LifelineBroker", "LifelineCLI", "LifelineProtocol", "LifelineSupport", "ZeroMQ",
                "GatewayAPI", "CartAPI",
            ],
            exclude: ["Lifeline.api"]),
    ],
    swiftLanguageModes: [.v6]
)

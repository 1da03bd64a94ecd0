import LifelineProtocol
import Testing

@testable import LifelineBroker

@Suite("Micro-app session stack", .timeLimit(.minutes(1)))
struct SessionStackTests {
    /// `app.callback` for each callback, to compare orders at a glance.
    static func order(_ outcome: SessionStack.Outcome) -> [String] {
        outcome.callbacks.map { "\($0.app).\($0.name.rawValue)" }
    }

    static func push(
        _ stack: inout SessionStack, _ app: String, mode: LaunchMode = .pushWithAnimation,
        clearTop: Bool = false, parent: String? = nil
    ) -> SessionStack.Outcome {
        stack.start(
            app: app, host: "host-\(app)", params: ["from": "test"], mode: mode, clearTop: clearTop,
            parent: parent, now: 1)
    }

    @Test(
        "starting an app over another: the old top pauses before the new one launches",
        arguments: LaunchMode.allCases)
    func startOrder(mode: LaunchMode) {
        var stack = SessionStack()
        _ = Self.push(&stack, "A")
        let outcome = Self.push(&stack, "B", mode: mode)
        #expect(
            Self.order(outcome) == [
                "B.didCreate", "A.willPause", "B.willStartLaunching", "B.didFinishLaunching",
            ])
        #expect(stack.sessions.map(\.app) == ["A", "B"])
        #expect(stack.sessions.map(\.state) == [.paused, .running])
        #expect(stack.top?.mode == mode)
        #expect(outcome.callbacks[2].arguments == ["options": ["from": "test"]])
    }

    @Test(
        "clearTop pops back to the existing session and resumes it with the params; without it a new one is pushed"
    )
    func clearTop() {
        var stack = SessionStack()
        _ = Self.push(&stack, "A")
        _ = Self.push(&stack, "B", parent: "s1")
        let again = stack.start(
            app: "A", host: "host-A", params: ["tab": 2], mode: .pushNoAnimation, clearTop: true, parent: nil,
            now: 2)
        #expect(Self.order(again) == ["B.willTerminate", "A.childDidFinish", "A.willResume", "A.didResume"])
        #expect(again.callbacks[3].arguments == ["options": ["tab": 2]])
        #expect(stack.sessions.map(\.id) == ["s1"])
        _ = Self.push(&stack, "B")
        let fresh = Self.push(&stack, "A")
        #expect(fresh.started?.id == "s4")
        #expect(stack.sessions.map(\.app) == ["A", "B", "A"])
        #expect(stack.newest("A")?.id == "s4" && stack.all("A").map(\.id) == ["s1", "s4"])
    }

    @Test("starting the Launcher exits every app above it")
    func launcher() {
        var stack = SessionStack(launcher: "launcher")
        _ = Self.push(&stack, "launcher")
        _ = Self.push(&stack, "login")
        _ = Self.push(&stack, "help", mode: .presentWithAnimation)
        let home = Self.push(&stack, "launcher")
        #expect(
            Self.order(home) == [
                "help.willTerminate", "login.willTerminate", "launcher.willResume", "launcher.didResume",
            ])
        #expect(stack.sessions.map(\.app) == ["launcher"])
    }

    @Test("exit: only the top exits normally; the parent hears the result; the new top resumes")
    func exitOrder() throws {
        var stack = SessionStack()
        _ = Self.push(&stack, "launcher")
        _ = Self.push(&stack, "login", parent: "s1")
        _ = Self.push(&stack, "keyboard")
        #expect(stack.exitProblem("s2")?.hasPrefix("only the top session may exit normally") == true)
        #expect(stack.exitProblem("s3") == nil)
        let forced = stack.exit("s2", result: ["ok": true], animated: true, forced: true, now: 3)
        #expect(
            Self.order(forced) == ["login.willTerminate", "launcher.childDidFinish"],
            "a middle session leaves without resuming anyone")
        #expect(forced.callbacks[1].arguments["result"] == ["ok": true])
        let top = stack.exit("s3", result: nil, animated: false, forced: false, now: 4)
        #expect(Self.order(top) == ["keyboard.willTerminate", "launcher.willResume", "launcher.didResume"])
        #expect(stack.sessions.map(\.state) == [.running])
    }

    @Test("exit-all, dismiss and pop-to-root")
    func bulkExits() {
        var stack = SessionStack()
        _ = Self.push(&stack, "root")
        _ = Self.push(&stack, "list")
        _ = Self.push(&stack, "detail", mode: .presentWithAnimation)
        _ = Self.push(&stack, "picker")
        let dismissed = stack.dismiss(now: 5)
        #expect(
            dismissed.map(Self.order) == [
                "picker.willTerminate", "detail.willTerminate", "list.willResume", "list.didResume",
            ])
        #expect(stack.dismiss(now: 5) == nil, "nothing presented any more")
        _ = Self.push(&stack, "detail")
        let popped = stack.popToRoot(now: 6)
        #expect(
            Self.order(popped) == [
                "detail.willTerminate", "list.willTerminate", "root.willResume", "root.didResume",
            ])
        let all = stack.exitAll(now: 7)
        #expect(Self.order(all) == ["root.willTerminate"] && stack.sessions.isEmpty)
    }

    @Test("a dismiss closes sessions as a clearTop does: willTerminate top first, then the parents that stay")
    func dismissLikeClearTop() {
        var dismissing = SessionStack()
        var clearing = SessionStack()
        _ = Self.push(&dismissing, "list")
        _ = Self.push(&dismissing, "detail", mode: .presentWithAnimation, parent: "s1")
        _ = Self.push(&dismissing, "picker", parent: "s2")
        let dismissed = dismissing.dismiss(now: 5)
        #expect(
            dismissed.map(Self.order) == [
                "picker.willTerminate", "detail.willTerminate", "list.childDidFinish", "list.willResume",
                "list.didResume",
            ])
        #expect(dismissed?.exited.map(\.0.app) == ["picker", "detail"])
        _ = Self.push(&clearing, "list")
        _ = Self.push(&clearing, "detail", parent: "s1")
        _ = Self.push(&clearing, "picker", parent: "s2")
        let cleared = Self.push(&clearing, "list", clearTop: true)
        #expect(
            Self.order(cleared) == [
                "picker.willTerminate", "detail.willTerminate", "list.childDidFinish", "list.willResume",
                "list.didResume",
            ])
    }

    @Test("a dead host takes its sessions with it; parents hear of the crash; the one below resumes")
    func hostCrash() {
        var stack = SessionStack()
        _ = Self.push(&stack, "launcher")
        _ = stack.start(
            app: "home", host: "shell", params: .emptyObject, mode: .pushWithAnimation, clearTop: false,
            parent: "s1", now: 1)
        _ = stack.start(
            app: "settings", host: "shell", params: .emptyObject, mode: .pushWithAnimation, clearTop: false,
            parent: "s2", now: 1)
        let outcome = stack.removeHost("shell", now: 8)
        #expect(outcome.crashed.map(\.app) == ["home", "settings"])
        #expect(
            Self.order(outcome) == ["launcher.childDidFinish", "launcher.willResume", "launcher.didResume"])
        #expect(outcome.callbacks[0].arguments["result"] == ["crashed": true])
        #expect(stack.sessions.map(\.app) == ["launcher"] && stack.top?.state == .running)
    }

    @Test("the stack survives on disk: restored detached, re-attached host by host with restore callbacks")
    func persistence() throws {
        var stack = SessionStack(launcher: "launcher")
        _ = Self.push(&stack, "launcher")
        _ = stack.start(
            app: "home", host: "shell", params: ["user": "ana"], mode: .pushWithAnimation, clearTop: false,
            parent: "s1", now: 9)
        let saved = JSONWriter.encode(stack.json)
        var restored = try SessionStack(json: try JSONParser.parse(saved), launcher: "launcher")
        #expect(restored.sessions.map(\.state) == [.detached, .detached])
        let shell = restored.attach(host: "shell", now: 10)
        #expect(shell.map { "\($0.app).\($0.name.rawValue)" } == ["home.restore"])
        #expect(restored.sessions.map(\.state) == [.detached, .running])
        #expect(restored.sessions[1].params == ["user": "ana"] && restored.sessions[1].parent == "s1")
        _ = restored.attach(host: "host-launcher", now: 11)
        #expect(restored.sessions.map(\.state) == [.paused, .running])
        #expect(Self.push(&restored, "next").started?.id == "s3", "ids continue after a restart")
        // A file whose counter is missing, of another kind or behind its sessions gives no id twice.
        for counter: JSONValue in ["x", 0, .null] {
            var document = try JSONParser.parse(saved)
            if case .object(var members) = document {
                members["counter"] = counter
                document = .object(members)
            }
            var damaged = try SessionStack(json: document, launcher: "launcher")
            #expect(Self.push(&damaged, "next").started?.id == "s3", "counter \(counter)")
        }
        #expect(throws: ProtocolError.self) { try SessionStack(json: [1, 2, 3], launcher: nil) }
    }
}

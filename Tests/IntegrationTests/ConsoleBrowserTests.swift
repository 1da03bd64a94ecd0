import Foundation
import Lifeline
import LifelineProtocol
import Testing

/// The console in a real browser: Debian's chromium, headless, driven through chromedriver.
@Suite(
    "Real processes: lifeline console in headless Chromium", .serialized, .timeLimit(.minutes(3)),
    .enabled(
        if: Browser.available,
        "chromium and chromium-driver are not installed (deploy/test.sh installs them as root)"))
struct ConsoleBrowserTests {
    @Test(
        "the page goes live: a service started later appears, a killed one is marked gone, events move the rate and the tail (as text), an apps action changes the stack"
    )
    func live() async throws {
        let broker = try await BrokerProcess(["--launcher", "launcher"])
        let gateway = try await broker.service("lifeline-gateway")
        let shell = try await broker.service("lifeline-shell")
        #expect(try await broker.cli(["boot", "start"]).status == 0)
        try await shell.waitForLine { $0 == "CALLBACK s2 login didFinishLaunching" }
        let console = try await ConsoleProcess(broker: broker.control)
        var children = [console.process, shell, gateway, broker.process]
        defer { for child in children { child.kill() } }
        try await Browser.with { browser in

            try await browser.open(console.url)
            try await browser.waitFor(
                "the live stream", #"return document.getElementById("connection").textContent === "live""#)
            try await browser.waitFor(
                "the gateway",
                #"return document.querySelector('#services tr[data-name="gateway"][data-state="up"]') !== null"#
            )
            try await browser.waitFor(
                "the stack", #"return document.querySelector('#stack tr.top')?.dataset.app === "login""#)
            try await browser.waitFor(
                "the boot",
                #"return document.getElementById("boot-text").textContent.includes("critical chain")"#
            )
            // The epoch, a 64-bit number past 2^53, as exact as `lifeline status` has it.
            let status = try await broker.cli(["status"])
            let epoch =
                status.output.split(separator: "\n").first { $0.hasPrefix("epoch:") }
                .map { $0.dropFirst("epoch:".count).trimmingCharacters(in: .whitespaces) } ?? "?"
            let shownEpoch = try await browser.waitFor(
                "the broker's epoch",
                #"const m = document.getElementById("broker").textContent.match(/epoch ([0-9]+)/); return m ? m[1] : null"#
            )
            #expect(
                shownEpoch.stringValue == epoch,
                "the page shows epoch \(shownEpoch), lifeline status \(epoch)")

            // A service started after the page loaded appears without a reload (the views poll every second).
            let push = try await broker.service("lifeline-push")
            children.append(push)
            let appeared = ContinuousClock.now
            try await browser.waitFor(
                "the push service",
                #"return document.querySelector('#services tr[data-name="push"][data-state="up"]') !== null"#)
            print("console: a started service appeared after \(ContinuousClock.now - appeared)")

            // The services table sorts by a clicked column (again: the other way) and filters by name.
            func names() async throws -> String {
                try await browser.run(
                    #"return [...document.querySelectorAll('#services tr[data-name]')].map(tr => tr.dataset.name).join(",")"#
                ).stringValue ?? ""
            }
            let byName = try await names()
            #expect(
                byName.split(separator: ",").sorted() == byName.split(separator: ","), "by name: \(byName)")
            try await browser.click(#"#services th[data-sort="name"]"#)
            try await browser.waitFor(
                "names the other way",
                #"return document.querySelector('#services th[data-sort="name"]').dataset.order === "descending" ? true : null"#
            )
            let reversed = try await names()
            #expect(
                reversed.split(separator: ",") == byName.split(separator: ",").reversed(),
                "reversed: \(reversed)")
            try await browser.type("#services-filter", "gate")
            try await browser.waitFor(
                "only the gateway",
                #"return [...document.querySelectorAll('#services tr[data-name]')].map(tr => tr.dataset.name).join(",") === "gateway""#
            )
            _ = try await browser.run(
                #"const f = document.getElementById("services-filter"); f.value = ""; f.dispatchEvent(new Event("input")); return true"#
            )
            try await browser.click(#"#services th[data-sort="name"]"#)

            // Published events move the rate and the tail; a payload with markup is shown as text.
            let hostile = #"<script>window.pwned=1</script><img src=x onerror="window.pwned=2">"#
            for index in 0..<5 {
                #expect(
                    try await broker.cli(["publish", "com.example.consoleTest", "index:=\(index)"]).status
                        == 0)
            }
            #expect(
                try await broker.cli(["publish", "com.example.consoleTest", "note=\(hostile)"]).status == 0)
            try await browser.waitFor(
                "the rate row",
                #"return document.querySelector('#rates tr[data-name="com.example.consoleTest"]') !== null"#)
            let minute = try await browser.waitFor(
                "six events in the last minute",
                #"const row = document.querySelector('#rates tr[data-name="com.example.consoleTest"]'); return row && row.cells[2].textContent === "6" ? row.cells[2].textContent : null"#
            )
            #expect(minute == "6")
            // The chart's axes: round numbers per second (its top 1, 2 or 5 times a power of ten,
            // the middle half of it), and a tick a minute back to five minutes ago.
            let ticks = try await browser.run(
                #"return document.getElementById("chart").dataset.ticks ?? null"#)
            let labels = (ticks.stringValue ?? "").split(separator: ",").map(String.init)
            let numbers = labels.compactMap { Double($0.replacingOccurrences(of: "/s", with: "")) }
            #expect(labels.count == 3 && numbers.count == 3, "chart ticks \(ticks)")
            if numbers.count == 3 {
                let power = pow(10, floor(log10(numbers[2])))
                #expect(numbers[0] == 0 && numbers[1] * 2 == numbers[2], "chart ticks \(labels)")
                #expect([1.0, 2.0, 5.0].contains(numbers[2] / power), "chart top \(labels)")
            }
            #expect(
                try await browser.run(#"return document.getElementById("chart").dataset.times ?? null"#)
                    == "−5 min,−4 min,−3 min,−2 min,−1 min,now")
            let shown = try await browser.waitFor(
                "the hostile payload in the tail",
                #"return [...document.querySelectorAll('#tail li[data-event="com.example.consoleTest"] .payload')].map(e => e.textContent).find(t => t.includes("pwned")) ?? null"#
            )
            #expect(shown.stringValue?.contains("<script>window.pwned=1</script>") == true, "\(shown)")
            #expect(
                try await browser.run(
                    "return window.pwned === undefined && document.querySelectorAll('#tail script, #tail img').length === 0"
                ) == true)

            // The tail filter: only matching names.
            try await browser.type("#tail-filter", "consoleTest")
            try await browser.waitFor(
                "the filtered tail",
                #"const items = [...document.querySelectorAll('#tail li')]; return items.length === 6 && items.every(li => li.dataset.event === "com.example.consoleTest")"#
            )

            // Pause holds the tail still; what arrives meanwhile is added on Resume.
            try await browser.click("#tail-pause")
            #expect(try await broker.cli(["publish", "com.example.consoleTest", "held:=1"]).status == 0)
            try await browser.waitFor(
                "the paused note",
                #"return document.getElementById("tail-note").textContent === "paused, 1 new""#)
            #expect(
                try await browser.run(#"return document.querySelectorAll('#tail li').length"#) == 6,
                "nothing is added while paused")
            try await browser.click("#tail-pause")
            try await browser.waitFor(
                "the held event",
                #"const items = [...document.querySelectorAll('#tail li')]; return items.length === 7 && items[0].textContent.includes("held") ? true : null"#
            )

            // An apps action from the page changes the stack on screen.
            _ = try await browser.runAction(
                "apps", #"action login signIn '{"user": "ana", "password": "secret"}'"#, expecting: 0)
            try await browser.waitFor(
                "home on top", #"return document.querySelector('#stack tr.top')?.dataset.app === "home""#)

            // A bad action: the CLI's own sentence, naming the nearest event.
            let refused = try await browser.runAction("publish", "didBecomeActiv", expecting: 2)
            #expect(refused.contains("didBecomeActive"), "\(refused)")

            // Traces, only while their view is open.
            try await browser.click("#trace-details summary")
            try await browser.waitFor(
                "the TRACE lease",
                #"return document.getElementById("trace-note").textContent === "traced while this is open""#)
            #expect(try await broker.cli(["call", "push", "status"]).status == 0)
            try await browser.waitFor(
                "the call's trace",
                #"return document.querySelector('#trace li[data-event="callDidFinish"]') !== null"#)

            // A killed service is marked gone within its liveness window (3 s here), then stays marked.
            push.kill(SIGKILL)
            let killed = ContinuousClock.now
            try await browser.waitFor(
                "push gone",
                #"return document.querySelector('#services tr[data-name="push"][data-state="gone"]') !== null"#
            )
            print("console: a killed service was marked gone after \(ContinuousClock.now - killed)")

            // The screenshot in docs/ (LIFELINE_CONSOLE_SCREENSHOT=docs/console.png): the live page.
            if let path = ProcessInfo.processInfo.environment["LIFELINE_CONSOLE_SCREENSHOT"] {
                try await browser.screenshot().write(to: URL(fileURLWithPath: path))
            }

            // The broker killed: every figure it gave turns stale at once; back, the page is live
            // again by itself (no reload).
            broker.process.kill(SIGKILL)
            let died = ContinuousClock.now
            try await browser.waitFor(
                "the page stale",
                #"return document.getElementById("connection").textContent === "stale" && [...document.querySelectorAll('#services tr[data-name]')].every(tr => tr.dataset.stale === "true") && document.querySelector('#services tr[data-name]') !== null"#
            )
            print("console: the page turned stale \(ContinuousClock.now - died) after the broker died")
            let again = try await BrokerProcess(
                control: broker.control, bus: broker.bus, ["--launcher", "launcher"])
            children.append(again.process)
            try await browser.waitFor(
                "the page live again",
                #"return document.getElementById("connection").textContent === "live" && document.querySelector('#services tr[data-stale]') === null"#
            )

            #expect(try await browser.severeLogs() == [], "no script error, no failed load")
        }
    }

    @Test(
        "a page opened after 30 s of load shows that load in its chart, and events published just before it: the console counts with no page open"
    )
    func historyWithoutAPage() async throws {
        let broker = try await BrokerProcess()
        let console = try await ConsoleProcess(broker: broker.control)
        defer { for child in [console.process, broker.process] { child.kill() } }
        // The console has sampled the broker's counts once: what comes next is counted.
        var counting = JSONValue.null
        let deadline = ContinuousClock.now + .seconds(30)
        while (counting["samples"]?.intValue ?? 0) < 1 && ContinuousClock.now < deadline {
            counting =
                try JSONParser.parse(Array(try await console.fetch("/api/state").body.utf8))["counting"]
                ?? .null
            if (counting["samples"]?.intValue ?? 0) < 1 { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(
            (counting["samples"]?.intValue ?? 0) >= 1, "the console samples the broker's counts: \(counting)")
        // 30 s of load, 10 events a second, with no page open.
        let load = LifelineClient(broker: broker.control, credentials: nil)
        let clock = ContinuousClock()
        let loadStarted = clock.now
        var published = 0
        while clock.now - loadStarted < .seconds(30) {
            for _ in 0..<10 {
                await load.post("com.example.load", ["n": .int(Int64(published))])
                published += 1
            }
            try await Task.sleep(for: .seconds(1))  // the load's pace, not a wait for something
        }
        try await load.flush()
        for index in 0..<5 {
            #expect(try await broker.cli(["publish", "com.example.before", "index:=\(index)"]).status == 0)
        }
        try await Browser.with { browser in
            try await browser.open(console.url)
            // Every event of the load in the chart's five minutes, spread over its seconds.
            let charted = try await browser.waitFor(
                "the load in the chart",
                #"const c = document.getElementById("chart"); return Number(c.dataset.total) >= arguments[0] ? c.dataset.total + " " + c.dataset.busySeconds : null"#,
                [.int(Int64(published + 5))])
            let figures = (charted.stringValue ?? "").split(separator: " ").compactMap { Int($0) }
            #expect(
                figures.first == published + 5, "the chart holds \(charted), \(published) + 5 were published")
            // Spread over its seconds (a sample the console took late counts two seconds as one).
            #expect((figures.last ?? 0) >= 15, "the load's seconds in the chart: \(charted)")
            let minute = try await browser.waitFor(
                "the events published before the page opened",
                #"const row = document.querySelector('#rates tr[data-name="com.example.before"]'); return row && row.cells[2].textContent === "5" ? row.cells[2].textContent : null"#
            )
            #expect(minute == "5")
            // The last hour, a point a minute (the current minute's so far): the same five events.
            try await browser.click(#"#bus-panel button[data-range="1h"]"#)
            try await browser.waitFor(
                "the hour's chart with the events",
                #"const c = document.getElementById("chart"); return c.dataset.times.startsWith("−60 min") && (c.dataset.series || "").split(",").includes("com.example.before") ? true : null"#
            )
            try await browser.click(#"#bus-panel button[data-range="5m"]"#)
            try await browser.waitFor(
                "five minutes again",
                #"return document.getElementById("chart").dataset.times.startsWith("−5 min") ? true : null"#)
            // The tail reads the bus; hidden, it no longer does (after the console's 10 s grace).
            func subscribed() async throws -> Bool? {
                try JSONParser.parse(Array(try await console.fetch("/api/state").body.utf8))["bus"]?[
                    "subscribed"]?
                    .boolValue
            }
            let shown = ContinuousClock.now + .seconds(30)
            while try await subscribed() != true && ContinuousClock.now < shown {
                try await Task.sleep(for: .milliseconds(200))  // polling the console's view with a deadline
            }
            #expect(try await subscribed() == true, "the page's tail reads the bus")
            try await browser.click("#tail-toggle")
            let hidden = ContinuousClock.now + .seconds(40)
            while try await subscribed() != false && ContinuousClock.now < hidden {
                try await Task.sleep(for: .milliseconds(200))  // polling the console's view with a deadline
            }
            #expect(try await subscribed() == false, "with the tail hidden the console leaves the bus")
            try await browser.click("#tail-toggle")
            try await browser.waitFor(
                "the tail again",
                #"return document.getElementById("tail-toggle").textContent === "Hide" ? true : null"#)
            #expect(try await browser.severeLogs() == [])
        }
    }

    @Test(
        "a service's page: its method's calls move, its events, boot tasks and description show, the range switches to an hour; an unknown service says so"
    )
    func servicePage() async throws {
        let broker = try await BrokerProcess()
        let push = try await broker.service("lifeline-push")
        let console = try await ConsoleProcess(broker: broker.control)
        defer { for child in [console.process, push, broker.process] { child.kill() } }
        try await Browser.with { browser in
            try await browser.open(console.url)
            try await browser.waitFor(
                "the push service",
                #"return document.querySelector('#services tr[data-name="push"] a') !== null"#)
            // The name is a link to the service's page (clicked in the page: the table is redrawn
            // every second, so an element found by the driver may be gone by its click).
            _ = try await browser.run(
                #"document.querySelector('#services tr[data-name="push"] a').click(); return true"#)
            try await browser.waitFor(
                "the service's page",
                #"return document.getElementById("service-view").dataset.state === "shown" && document.getElementById("services-panel").offsetParent === null ? true : null"#
            )
            #expect(try await browser.run("return location.hash") == "#service=push")
            for _ in 0..<3 { #expect(try await broker.cli(["call", "push", "status"]).status == 0) }
            let requests = try await browser.waitFor(
                "three calls of push.status",
                #"const cell = document.querySelector('#service-methods tr[data-method="status"] td.requests'); return cell && cell.textContent === "3" ? cell.textContent : null"#
            )
            #expect(requests == "3")
            try await browser.waitFor(
                "status in the chart",
                #"return (document.getElementById("service-chart").dataset.series || "").split(",").includes("status") ? true : null"#
            )
            #expect(
                try await browser.run(#"return document.getElementById("service-chart").dataset.times"#)
                    == "−5 min,−4 min,−3 min,−2 min,−1 min,now")
            // Its p50 and p99 over time, from the broker's latency buckets.
            try await browser.waitFor(
                "status's latency in its chart",
                #"const s = (document.getElementById("service-latency").dataset.series || "").split(","); return s.includes("status p50") && s.includes("status p99") ? true : null"#
            )
            let summary = try await browser.run(
                #"return document.querySelector('#service-methods tr[data-method="status"]').cells[9].textContent"#
            )
            #expect(summary.stringValue?.hasPrefix("the device token") == true, "summary \(summary)")
            #expect(
                try await browser.run(
                    #"return document.querySelector('#service-events tr[data-event="didRegisterForRemoteNotifications"]') !== null"#
                ) == true)
            #expect(
                try await browser.run(
                    #"return document.querySelector('#service-boot tr[data-task="push.registerAPNs"]') !== null"#
                )
                    == true)
            #expect(
                try await browser.run(#"return document.getElementById("service-describe").textContent"#)
                    .stringValue?.contains("status(") == true)
            // Its screenshot beside the live page's (LIFELINE_CONSOLE_SCREENSHOT=docs/console.png
            // writes docs/console-service.png here).
            if let path = ProcessInfo.processInfo.environment["LIFELINE_CONSOLE_SCREENSHOT"] {
                let file = URL(fileURLWithPath: path).deletingPathExtension().path + "-service.png"
                try await browser.screenshot().write(to: URL(fileURLWithPath: file))
            }
            // An hour, a point a minute; the calls are in the current minute's point once it is over,
            // so only the axis is checked here.
            try await browser.click(#"#service-view button[data-range="1h"]"#)
            try await browser.waitFor(
                "the hour range",
                #"return document.getElementById("service-view").dataset.range === "1h" && document.getElementById("service-chart").dataset.times.startsWith("−60 min") ? true : null"#
            )
            // What a service says of itself is shown as text: a summary and shapes with markup.
            let hostile = #"<img src=x onerror="window.pwned=3"><script>window.pwned=4</script>"#
            var options = ServiceRunner.Options()
            options.broker = broker.control
            let runner = ServiceRunner(
                Service("hostile").method("probe", summary: hostile, arguments: hostile, reply: hostile) {
                    _ in
                    ["ok": true]
                }, options: options)
            let running = Task { try await runner.run() }
            defer {
                runner.stop()
                running.cancel()
            }
            try await browser.click("#service-back")
            try await browser.waitFor(
                "the hostile service registered",
                #"return document.querySelector('#services tr[data-name="hostile"]') !== null"#)
            _ = try await browser.run(##"location.hash = "#service=hostile"; return true"##)
            let shown = try await browser.waitFor(
                "the hostile summary",
                #"const row = document.querySelector('#service-methods tr[data-method="probe"]'); return row ? row.cells[9].textContent : null"#
            )
            #expect(shown.stringValue == hostile)
            #expect(
                try await browser.run(#"return document.getElementById("service-describe").textContent"#)
                    .stringValue?.contains(hostile) == true)
            #expect(
                try await browser.run(
                    ##"return window.pwned === undefined && document.querySelector("#service-view img, #service-view script") === null"##
                ) == true, "markup from a service is shown, never run")
            // Back to every service, then a name nobody registered.
            try await browser.click("#service-back")
            try await browser.waitFor(
                "the services again", #"return document.getElementById("service-view").hidden ? true : null"#)
            _ = try await browser.run(##"location.hash = "#service=nosuch"; return true"##)
            let note = try await browser.waitFor(
                "the unknown service",
                #"return document.getElementById("service-view").dataset.state === "missing" ? document.getElementById("service-note").textContent : null"#
            )
            #expect(note.stringValue?.contains("no service named 'nosuch' is registered") == true, "\(note)")
            // The browser logs the 404 it was answered as a failed load: that one is expected.
            let logs = try await browser.severeLogs().filter { !$0.contains("/api/service?name=nosuch") }
            #expect(logs == [], "no script error, no other failed load")
        }
        // The page's data, as a client of the console reads it.
        let bad = try await console.fetch("/api/service?name=push&range=1d")
        #expect(bad.status == 400 && bad.body.contains("range must be 5m or 1h"))
    }

    @Test(
        "a broker group: the page shows its leader, term, standbys' positions and etcd's lease; a kill -9 of the leader shows the new one",
        .enabled(
            if: EtcdProcess.available, "etcd is not installed (deploy/test.sh installs etcd-server as root)"))
    func group() async throws {
        let rig = try await GroupRig(services: 1, events: 100)
        defer { rig.stop() }
        let console = try await ConsoleProcess(broker: rig.brokers)
        defer { console.process.kill() }
        try await rig.showingLogs {
            try await Browser.with { browser in
                try await browser.open(console.url)
                let first = try await browser.waitFor(
                    "the group's leader and two standbys",
                    #"const p = document.getElementById("group-panel"); return !p.hidden && document.querySelectorAll('#group tr[data-state="standby"]').length === 2 && document.querySelector('#group tr[data-state="leader"]') ? p.dataset.leader + " " + p.dataset.term : null"#
                )
                let parts = (first.stringValue ?? "").split(separator: " ").map(String.init)
                let (leader, term) = (parts.first ?? "", parts.last ?? "")
                #expect(
                    leader == rig.leader?.name,
                    "the page says \(leader) leads; the members say \(rig.leader?.name ?? "-")")
                #expect(
                    try await browser.run(#"return document.getElementById("group-etcd").textContent"#)
                        .stringValue?
                        .contains("lease is valid for") == true)
                if let path = ProcessInfo.processInfo.environment["LIFELINE_CONSOLE_SCREENSHOT"] {
                    let file = URL(fileURLWithPath: path).deletingPathExtension().path + "-group.png"
                    try await browser.screenshot().write(to: URL(fileURLWithPath: file))
                }
                let killed = try #require(rig.leader)
                killed.process.kill(SIGKILL)
                let after = try await browser.waitFor(
                    "a new leader under a later term", seconds: 60,
                    #"const p = document.getElementById("group-panel"); return p.dataset.leader && p.dataset.leader !== arguments[0] && BigInt(p.dataset.term) > BigInt(arguments[1]) ? p.dataset.leader : null"#,
                    [.string(leader), .string(term)])
                print("console: the group view shows \(after) leading after the kill of \(leader)")
                try await browser.waitFor(
                    "the killed member unreached", seconds: 30,
                    #"return document.querySelector('#group tr[data-member="' + arguments[0] + '"]')?.dataset.state === "unreached" ? true : null"#,
                    [.string(leader)])
                #expect(try await browser.severeLogs() == [], "no script error, no failed load")
            }
        }
    }

    @Test("with CURVE the page shows what its key may; an action the key may not do shows the broker's 403")
    func forbidden() async throws {
        let keys = try SecuritySetup(keys: ["console", "push"])
        defer { keys.remove() }
        try keys.writePolicy([
            "console": ["observe": true, "publish": ["com.example.allowed"], "subscribe": ["*"]],
            "push": ["register": ["push"], "subscribe": ["*"], "publish": ["*"]],
        ])
        let broker = try await BrokerProcess(keys.brokerArguments)
        let push = try await broker.service("lifeline-push", keys.keyArguments("push"))
        let console = try await ConsoleProcess(broker: broker.control, keys.keyArguments("console"))
        defer { for child in [console.process, push, broker.process] { child.kill() } }
        try await Browser.with { browser in
            try await browser.open(console.url)
            try await browser.waitFor(
                "the push service",
                #"return document.querySelector('#services tr[data-name="push"]') !== null"#)
            _ = try await browser.runAction("publish", "com.example.allowed", expecting: 0)
            let refused = try await browser.runAction("publish", "com.example.forbidden", expecting: 1)
            #expect(refused.contains("may not publish"), "\(refused)")
            #expect(
                refused.contains("403"),
                "a refused publish shows its status, as a refused call does: \(refused)")
            #expect(refused.contains("console"), "the denial names the key: \(refused)")
            #expect(try await browser.severeLogs() == [])
        }
    }
}

extension ConsoleAssets {
    /// The page's script. It writes everything it shows as text (`textContent`, `append` of strings),
    /// never as markup, so a payload such as `<script>` is shown, not run.
    static let script = #"""
        "use strict";
        const token = document.querySelector('meta[name="lifeline-token"]').content;
        const $ = (id) => document.getElementById(id);
        const colors = ["#2f5bd3", "#d0392b", "#1a7f37", "#b26b00", "#7b3fc4", "#00838f"];
        // Epochs and sequences are 64-bit: an integer past 2^53 would lose its last digits as a
        // double, so it is kept as the digits the broker wrote (the reviver's source text).
        const exactJSON = (text) => JSON.parse(text, (key, value, context) =>
          typeof value === "number" && !Number.isSafeInteger(value) && context && /^-?[0-9]+$/.test(context.source)
            ? context.source : value);

        function el(tag, attributes, ...children) {
          const element = document.createElement(tag);
          for (const [key, value] of Object.entries(attributes || {})) {
            if (value === undefined || value === null) continue;
            if (key === "class") element.className = value;
            else element.setAttribute(key, String(value));
          }
          for (const child of children) element.append(child instanceof Node ? child : String(child ?? ""));
          return element;
        }

        function cell(text, className) { return el("td", { class: className }, text ?? "-"); }

        function duration(ms) {
          if (ms === undefined || ms === null) return "-";
          if (ms < 1000) return ms + " ms";
          const s = ms / 1000;
          if (s < 60) return s.toFixed(1) + " s";
          if (s < 3600) return Math.floor(s / 60) + " min " + Math.floor(s % 60) + " s";
          return Math.floor(s / 3600) + " h " + Math.floor((s % 3600) / 60) + " min";
        }

        function list(items, shown) {
          if (!items || items.length === 0) return "-";
          return items.length <= shown ? items.join(", ") : items.slice(0, shown).join(", ") + ", +" + (items.length - shown);
        }

        function clock(ms) {
          const date = new Date(ms);
          return date.toTimeString().slice(0, 8) + "." + String(date.getMilliseconds()).padStart(3, "0");
        }

        function replaceRows(table, rows) { table.tBodies[0].replaceChildren(...rows); }

        function showBanner(text) {
          const banner = $("banner");
          banner.hidden = !text;
          banner.textContent = text || "";
        }

        const problems = new Map();
        function problem(source, text) {
          if (text) problems.set(source, text); else problems.delete(source);
          showBanner([...problems.values()].join(" · "));
        }

        window.addEventListener("error", (event) => problem("script", "the page failed: " + event.message));

        // MARK: views

        // While the broker does not answer, every figure it gave is stale: the badge says so and the
        // rows are marked (data-stale), until it answers again.
        let streamOpen = false;
        let brokerDown = false;
        let lastServices = null;
        function showConnection() {
          const [text, state] = !streamOpen ? ["reconnecting", "down"] : brokerDown ? ["stale", "down"] : ["live", "live"];
          $("connection").textContent = text;
          $("connection").className = "pill " + state;
          $("connection").title = brokerDown ? "the broker does not answer: the figures below are the last it gave" : "";
          if (brokerDown) document.body.dataset.stale = "true"; else delete document.body.dataset.stale;
        }

        function renderBroker(broker) {
          if (broker.error) {
            problem("broker", "the broker does not answer: " + broker.error);
            $("lifecycle").textContent = "";
            if (!brokerDown) {
              brokerDown = true;
              showConnection();
              if (lastServices) renderServices(lastServices);
            }
            return;
          }
          problem("broker", null);
          if (brokerDown) {
            brokerDown = false;
            showConnection();
            if (lastServices) renderServices(lastServices);
          }
          const process = broker.broker || {};
          $("broker").textContent = broker.endpoint + " · pid " + process.pid + " on " + process.host +
            " · epoch " + broker.epoch + " · sequence " + broker.sequence;
          $("lifecycle").textContent = broker.lifecycle;
        }

        // The services table sorts by the column whose header was clicked last (again: the other
        // way) and shows the names that contain the filter's text.
        let serviceOrder = { column: "name", descending: false };
        const serviceKeys = {
          name: (s) => s.name, state: (s) => s.state, instances: (s) => (s.instances || []).length, pid: (s) => s.pid,
          host: (s) => s.host, events: (s) => (s.events || []).length, methods: (s) => (s.methods || []).length,
          uptime: (s) => s.uptimeMs, heartbeat: (s) => s.heartbeatAgeMs, handled: (s) => s.handled, dropped: (s) => s.dropped,
        };
        function compareServices(a, b) {
          const key = serviceKeys[serviceOrder.column];
          const [x, y] = [key(a), key(b)];
          const order = typeof x === "number" && typeof y === "number" ? x - y : String(x ?? "").localeCompare(String(y ?? ""));
          return (serviceOrder.descending ? -order : order) || a.name.localeCompare(b.name);
        }

        function renderServices(view) {
          lastServices = view;
          const stale = brokerDown ? "true" : undefined;
          $("services-note").textContent = view.error ? view.error : (view.statsError ? "calls: " + view.statsError : "");
          const filter = $("services-filter").value.trim().toLowerCase();
          const all = view.services || [];
          const services = all.filter((s) => !filter || s.name.toLowerCase().includes(filter)).sort(compareServices);
          const up = all.filter((s) => s.state !== "gone").length;
          $("services-count").textContent = up + " registered" + (up === all.length ? "" : ", " + (all.length - up) + " gone") +
            (services.length < all.length ? ", " + services.length + " shown" : "") +
            (stale ? " (stale: the broker does not answer)" : "");
          replaceRows($("services"), services.map((s) => el("tr", { "data-name": s.name, "data-state": s.state, "data-stale": stale },
            el("td", {}, el("a", { href: "#service=" + encodeURIComponent(s.name) }, s.name)),
            cell(stale ? "unknown" : s.state === "gone" ? "gone " + duration(s.goneForMs) + " ago" : s.state, "state"),
            el("td", { class: "num", title: (s.instances || []).map((i) => "pid " + i.pid + " on " + i.host +
              (i.inFlight === undefined ? "" : ": " + i.inFlight + " in flight") +
              (i.connected === false ? ", connection closed" : "")).join("\n") }, String((s.instances || []).length)),
            cell(s.pid, "num"), cell(s.host),
            el("td", { class: "list", title: (s.events || []).join("\n") }, list(s.events, 3)),
            el("td", { class: "list", title: (s.methods || []).join("\n") }, list(s.methods, 3)),
            cell(stale ? "—" : duration(s.uptimeMs)), cell(stale ? "—" : duration(s.heartbeatAgeMs) + " ago"),
            cell(s.handled, "num"), cell(s.dropped, "num"))));
          const calls = [];
          for (const s of services) {
            for (const [method, c] of Object.entries(s.calls || {}).sort()) {
              calls.push(el("tr", { "data-name": s.name + "." + method, "data-state": s.state, "data-stale": stale },
                cell(s.name), cell(method), cell(c.requests, "num"), cell(c.errors, "num"), cell(c.timeouts, "num"),
                cell(c.p50Ms, "num"), cell(c.p99Ms, "num")));
            }
          }
          replaceRows($("calls"), calls);
        }

        // A broker group, as its leader reports it (STATS `group`): hidden for a single broker.
        function renderGroup(group) {
          $("group-panel").hidden = !group;
          if (!group) return;
          const stale = brokerDown ? "true" : undefined;
          $("group-name").textContent = group.name;
          $("group-summary").textContent = "led by " + group.member + " · term " + group.term + " · commit " + group.commit +
            (stale ? " (stale: the broker does not answer)" : "");
          $("group-panel").dataset.leader = group.member;
          $("group-panel").dataset.term = String(group.term);
          replaceRows($("group"), (group.members || []).map((m) => el("tr", { "data-member": m.member, "data-state": m.role, "data-stale": stale },
            cell(m.member), cell(m.role, "state"), cell(m.index, "num"), cell(m.lag, "num"),
            cell(m.heardMsAgo === undefined ? "-" : duration(m.heardMsAgo) + " ago"))));
          const etcd = group.etcd || {};
          $("group-etcd").textContent = "etcd " + (etcd.endpoints || []).join(", ") + ": " +
            (etcd.healthy ? "the leader's lease is valid for " + duration(etcd.leaseValidMs) : "the leader's lease is not known to be valid");
        }

        function renderStack(stack) {
          $("stack-note").textContent = stack.error ? stack.error : (stack.stack && stack.stack.length ? "" : "no sessions");
          const sessions = stack.stack || [];
          replaceRows($("stack"), sessions.map((s, index) => el("tr",
            { "data-session": s.id, "data-app": s.app, "data-state": s.state, class: index === sessions.length - 1 ? "top" : "" },
            cell(s.id), cell(s.app), cell(s.state, "state"), cell(s.mode), cell(s.host), cell(s.parent))));
        }

        function renderActors(view) {
          const actors = view.actors || [];
          $("actors-note").textContent = view.error ? view.error : (actors.length ? "" : "no actor by key is placed");
          replaceRows($("actors"), actors.map((a) => el("tr",
            { "data-actor": a.service + "/" + a.key, "data-state": a.waiting ? "waiting" : "placed" },
            el("td", { title: "instance " + a.instance }, a.service + "/" + a.key), cell(a.pid, "num"), cell(a.host),
            cell(duration(a.ageMs)), cell(a.calls, "num"), cell(a.inFlight, "num"),
            cell(a.waiting ? "waiting for its instance" : "placed", "state"))));
        }

        let bootVersion = 0;
        function renderBoot(boot) {
          $("boot-text").textContent = boot.error ? boot.error : boot.text;
          bootVersion += 1;
          $("boot-svg").src = "/api/boot.svg?v=" + bootVersion;
        }

        // MARK: rates

        const seconds = new Map();
        function addRates(entries) {
          for (const entry of entries) seconds.set(entry.second, entry.counts);
          const newest = Math.max(...seconds.keys());
          for (const second of seconds.keys()) if (second < newest - 300) seconds.delete(second);
          renderRates(newest);
        }

        function renderRates(newest) {
          const lastSecond = seconds.get(newest) || {};
          const minute = {};
          for (const [second, counts] of seconds) {
            if (second <= newest - 60) continue;
            for (const [name, count] of Object.entries(counts)) minute[name] = (minute[name] || 0) + count;
          }
          const total = Object.values(lastSecond).reduce((a, b) => a + b, 0);
          $("bus-rate").textContent = total + " events/s";
          const names = Object.keys(minute).sort((a, b) => minute[b] - minute[a]);
          replaceRows($("rates"), names.map((name) => el("tr", { "data-name": name },
            cell(name), cell(lastSecond[name] || 0, "num rate"), cell(minute[name], "num"))));
          if (busRange === "5m") drawChart(newest, names.slice(0, colors.length - 1));
        }

        // The smallest of 1, 2, 5, 10, 20, 50… at or above `value` (1 when idle): a round top for the
        // chart, whose half is round too.
        function niceCeiling(value) {
          if (value <= 1) return 1;
          const power = Math.pow(10, Math.floor(Math.log10(value)));
          for (const step of [1, 2, 5, 10]) if (step * power >= value) return step * power;
          return 10 * power;
        }

        function perSecond(value) {
          if (value >= 1e6) return +(value / 1e6).toFixed(1) + "M/s";
          if (value >= 1e3) return +(value / 1e3).toFixed(1) + "k/s";
          return +value.toFixed(1) + "/s";
        }

        function drawChart(newest, names) {
          const canvas = $("chart");
          const context = canvas.getContext("2d");
          const width = canvas.width, height = canvas.height, span = 300;
          context.clearRect(0, 0, width, height);
          const series = [{ name: "all", color: "#1d2330", value: (c) => Object.values(c).reduce((a, b) => a + b, 0) }]
            .concat(names.map((name, i) => ({ name, color: colors[i], value: (c) => c[name] || 0 })));
          let highest = 0, total = 0, busy = 0;
          for (const [second, counts] of seconds) {
            if (second <= newest - span) continue;
            const all = series[0].value(counts);
            highest = Math.max(highest, all);
            total += all;
            if (all > 0) busy += 1;
          }
          // What the chart holds, for a reader of the page: events and seconds with events.
          canvas.dataset.total = String(total);
          canvas.dataset.busySeconds = String(busy);
          const top = niceCeiling(highest);
          context.strokeStyle = "#e3e6ec";
          context.fillStyle = "#6b7385";
          context.font = "11px sans-serif";
          const ticks = [0, top / 2, top].map((value) => perSecond(value));
          ticks.forEach((label, i) => {
            const y = height - 14 - (i / 2) * (height - 24);
            context.beginPath(); context.moveTo(0, y); context.lineTo(width, y); context.stroke();
            context.fillText(label, 4, y - 2);
          });
          canvas.dataset.ticks = ticks.join(",");
          // The time axis: a tick a minute, from five minutes ago to now.
          const times = [];
          for (let minutes = 5; minutes >= 0; minutes--) {
            const x = (span - minutes * 60) / span * width;
            const label = minutes === 0 ? "now" : "−" + minutes + " min";
            context.beginPath(); context.moveTo(x, height - 14); context.lineTo(x, height - 10); context.stroke();
            const measured = context.measureText(label).width;
            context.fillText(label, Math.min(Math.max(0, x - measured / 2), width - measured), height - 1);
            times.push(label);
          }
          canvas.dataset.times = times.join(",");
          series.forEach((line, i) => {
            context.strokeStyle = line.color;
            context.lineWidth = line.name === "all" ? 2 : 1.2;
            // Series of the same rate would be drawn one over the other: every other one is dashed.
            context.setLineDash(i > 0 && i % 2 === 0 ? [5, 3] : []);
            context.beginPath();
            for (let second = newest - span; second <= newest; second++) {
              const x = (second - (newest - span)) / span * width;
              const y = height - 14 - line.value(seconds.get(second) || {}) / top * (height - 24);
              if (second === newest - span) context.moveTo(x, y); else context.lineTo(x, y);
            }
            context.stroke();
          });
          context.setLineDash([]);
          $("legend").replaceChildren(...series.map((line) => el("span", {}, el("i", { style: null }), line.name)));
          $("legend").querySelectorAll("i").forEach((swatch, i) => { swatch.style.background = series[i].color; });
        }

        for (const header of document.querySelectorAll("#services th[data-sort]")) {
          header.addEventListener("click", () => {
            const column = header.dataset.sort;
            serviceOrder = { column, descending: serviceOrder.column === column && !serviceOrder.descending };
            for (const other of document.querySelectorAll("#services th[data-sort]")) delete other.dataset.order;
            header.dataset.order = serviceOrder.descending ? "descending" : "ascending";
            if (lastServices) renderServices(lastServices);
          });
        }
        $("services-filter").addEventListener("input", () => { if (lastServices) renderServices(lastServices); });

        // MARK: a service's page (#service=NAME)

        // Its figures are asked every second while it is shown; the chart draws its calls and
        // handled events over the last five minutes (per second) or the last hour (per minute).
        let serviceRange = "5m";
        let serviceTimer = null;
        function serviceName() {
          const match = location.hash.match(/^#service=(.+)$/);
          return match ? decodeURIComponent(match[1]) : null;
        }

        function route() {
          const name = serviceName();
          clearTimeout(serviceTimer);
          if (!name) {
            delete document.body.dataset.view;
            $("service-view").hidden = true;
            return;
          }
          document.body.dataset.view = "service";
          $("service-view").hidden = false;
          $("service-title").textContent = name;
          for (const button of document.querySelectorAll("#service-view button.range")) {
            button.setAttribute("aria-pressed", String(button.dataset.range === serviceRange));
          }
          loadService();
        }

        async function loadService() {
          clearTimeout(serviceTimer);
          const name = serviceName();
          if (!name) return;
          try {
            const response = await fetch("/api/service?name=" + encodeURIComponent(name) + "&range=" + serviceRange,
              { headers: { "X-Lifeline-Token": token } });
            const text = await response.text();
            if (serviceName() !== name) return;
            if (response.ok) {
              renderService(exactJSON(text));
            } else {
              $("service-view").dataset.state = "missing";
              $("service-note").textContent = response.status + " " + response.statusText + ": " + text.trim();
            }
          } catch (error) {
            $("service-note").textContent = "the console does not answer: " + error.message;
          }
          serviceTimer = setTimeout(loadService, 1000);
        }

        function renderService(page) {
          const view = $("service-view");
          const record = page.record || {}, stats = page.stats || {};
          view.dataset.state = "shown";
          view.dataset.range = page.history.range;
          $("service-note").textContent = "";
          $("service-summary").textContent = [record.replicable ? "replicable" : null, record.lazy ? "lazy" : null,
            "up " + duration(record.uptimeMs), (record.events || []).length + " events", (record.methods || []).length + " methods"]
            .filter(Boolean).join(" · ");
          const figures = new Map((stats.instances || []).map((i) => [i.instance, i]));
          const instances = record.instances && record.instances.length ? record.instances
            : [{ instance: record.instance, pid: record.pid, host: record.host, connected: true, dropped: record.dropped }];
          replaceRows($("service-instances"), instances.map((i) => {
            const f = figures.get(i.instance) || {};
            return el("tr", { "data-instance": i.instance }, cell(i.instance), cell(i.pid, "num"), cell(i.host),
              cell(i.inFlight ?? f.inFlight, "num"), cell(f.answered, "num"), cell(i.connected === false ? "no" : "yes"),
              cell(f.queued ?? stats.queued, "num"), cell(i.dropped ?? f.dropped, "num"));
          }));
          const described = (record.describe && record.describe.methods) || {};
          const calls = stats.methods || {};
          const methods = [...new Set([...(record.methods || []), ...Object.keys(calls)])].sort();
          replaceRows($("service-methods"), methods.map((m) => {
            const c = calls[m] || {}, d = described[m] || {};
            return el("tr", { "data-method": m }, cell(m), cell(c.requests ?? 0, "num requests"), cell(c.errors ?? 0, "num errors"),
              cell(c.timeouts ?? 0, "num"), cell(c.meanMs == null ? "-" : +c.meanMs.toFixed(3), "num"), cell(c.p50Ms, "num"), cell(c.p99Ms, "num"),
              cell(d.arguments || "-", "list"), cell(d.reply || "-", "list"), cell(d.summary || "-", "list"));
          }));
          const handled = stats.handled || {};
          replaceRows($("service-events"), (record.events || []).map((e) => el("tr", { "data-event": e }, cell(e),
            cell(handled[e] ?? 0, "num handled"), cell((record.priorities || {})[e] ?? 0, "num"), cell((record.deadlines || {})[e], "num"))));
          $("service-figures").textContent = "queued " + (stats.queued ?? 0) + " · dropped " + (stats.dropped ?? 0) +
            " · undecodable " + (stats.undecodable ?? 0) + " · failed " + (stats.failed ?? 0) +
            " · dispatch steps " + (stats.dispatchSteps ?? 0);
          replaceRows($("service-boot"), (record.bootTasks || []).map((t) => el("tr", { "data-task": t.name }, cell(t.name), cell(t.phase),
            cell(t.priority, "num"), cell(list(t.after, 4)), cell(t.required ? "yes" : "no"), cell(t.runOnce ? "yes" : "no"))));
          const lines = [];
          for (const [m, d] of Object.entries(described).sort()) {
            lines.push(m + "(" + (d.arguments || "") + ") → " + (d.reply || "-") + (d.summary ? "   " + d.summary : ""));
          }
          for (const [e, d] of Object.entries((record.describe && record.describe.events) || {}).sort()) {
            lines.push(e + " " + JSON.stringify(d.fields || {}) + (d.summary ? "   " + d.summary : ""));
          }
          $("service-describe").textContent = lines.length ? lines.join("\n") : "(the service describes nothing)";
          drawHistory(page.history);
          drawHistory(page.history, "service-latency", "service-latency-legend", serviceLabel, page.history.latency || {}, true);
        }

        // The service's counts over its range: requests per method (solid), errors (dashed) and
        // events handled, as rates per second.
        // Draws `series` (name → one value per point, null for none) over the range of `history`:
        // counts as rates per second (`latency`: milliseconds as they are), the largest first.
        function drawHistory(history, canvasId = "service-chart", legendId = "service-legend", label = serviceLabel,
          series = history.series, latency = false) {
          const canvas = $(canvasId);
          const context = canvas.getContext("2d");
          const width = canvas.width, height = canvas.height, points = history.points, step = history.step;
          const scale = (value) => latency ? value : value / step;
          context.clearRect(0, 0, width, height);
          const total = (name) => series[name].reduce((x, y) => x + (y ?? 0), 0);
          const names = Object.keys(series).sort((a, b) => total(b) - total(a) || a.localeCompare(b)).slice(0, colors.length);
          let highest = 0;
          for (const name of names) for (const value of series[name]) if (value !== null) highest = Math.max(highest, scale(value));
          const top = niceCeiling(highest);
          context.strokeStyle = "#e3e6ec"; context.fillStyle = "#6b7385"; context.font = "11px sans-serif";
          const ticks = [0, top / 2, top].map((value) => latency ? +value.toFixed(2) + " ms" : perSecond(value));
          ticks.forEach((text, i) => {
            const y = height - 14 - (i / 2) * (height - 24);
            context.beginPath(); context.moveTo(0, y); context.lineTo(width, y); context.stroke();
            context.fillText(text, 4, y - 2);
          });
          canvas.dataset.ticks = ticks.join(",");
          const times = [];
          const every = step === 1 ? 60 : 600, span = points * step;
          for (let back = span; back >= 0; back -= every) {
            const x = (span - back) / span * width;
            const text = back === 0 ? "now" : "−" + (back / 60) + " min";
            context.beginPath(); context.moveTo(x, height - 14); context.lineTo(x, height - 10); context.stroke();
            const measured = context.measureText(text).width;
            context.fillText(text, Math.min(Math.max(0, x - measured / 2), width - measured), height - 1);
            times.push(text);
          }
          canvas.dataset.times = times.join(",");
          canvas.dataset.series = names.map(label).join(",");
          names.forEach((name, i) => {
            context.strokeStyle = colors[i];
            context.lineWidth = 1.5;
            context.setLineDash(name.startsWith("errors\t") || name.startsWith("p99\t") ? [5, 3] : []);
            context.beginPath();
            let drawing = false;
            series[name].forEach((value, index) => {
              if (value === null) { drawing = false; return; }
              const x = (index + 1) / points * width;
              const y = height - 14 - scale(value) / top * (height - 24);
              if (!drawing) context.moveTo(x, y); else context.lineTo(x, y);
              drawing = true;
              // A point of its own (one second with calls) shows as a dot.
              const before = series[name][index - 1], after = series[name][index + 1];
              if ((before === null || before === undefined) && (after === null || after === undefined)) {
                context.fillStyle = colors[i];
                context.fillRect(x - 2, y - 2, 4, 4);
              }
            });
            context.stroke();
          });
          context.setLineDash([]);
          $(legendId).replaceChildren(...names.map((name) => el("span", {}, el("i", {}), label(name))));
          $(legendId).querySelectorAll("i").forEach((swatch, i) => { swatch.style.background = colors[i]; });
        }

        function serviceLabel(key) {
          const [kind, name] = key.split("\t");
          return kind === "requests" ? name : kind === "errors" ? name + " errors" : kind === "handled" ? name + " handled" : name + " " + kind;
        }

        // The bus chart's range: the last five minutes from the stream, or the last hour per minute
        // (asked every 5 s while shown).
        let busRange = "5m";
        let busTimer = null;
        async function loadBusHour() {
          clearTimeout(busTimer);
          if (busRange !== "1h") return;
          try {
            const response = await fetch("/api/rates", { headers: { "X-Lifeline-Token": token } });
            if (response.ok && busRange === "1h") drawHistory(exactJSON(await response.text()), "chart", "legend", (name) => name);
          } catch (error) {
            problem("rates", "the console does not answer: " + error.message);
          }
          busTimer = setTimeout(loadBusHour, 5000);
        }
        for (const button of document.querySelectorAll("#bus-panel button.range")) {
          button.addEventListener("click", () => {
            busRange = button.dataset.range;
            $("chart").dataset.range = busRange;
            for (const other of document.querySelectorAll("#bus-panel button.range")) {
              other.setAttribute("aria-pressed", String(other === button));
            }
            if (busRange === "1h") loadBusHour(); else if (seconds.size) renderRates(Math.max(...seconds.keys()));
          });
        }

        for (const button of document.querySelectorAll("#service-view button.range")) {
          button.addEventListener("click", () => { serviceRange = button.dataset.range; route(); });
        }
        window.addEventListener("hashchange", route);
        route();

        // MARK: streams

        const views = new EventSource("/events");
        views.onopen = () => { streamOpen = true; showConnection(); };
        views.onerror = () => { streamOpen = false; showConnection(); };
        const handlers = {
          broker: renderBroker, services: renderServices, group: renderGroup, actors: renderActors, stack: renderStack, boot: renderBoot, rates: addRates,
          bus: (bus) => problem("bus", bus.error ? "the bus: " + bus.error : null),
          trace: (trace) => {
            $("trace-note").textContent = trace.error ? trace.error : (trace.leased ? "traced while this is open" : "");
          },
        };
        for (const [name, handler] of Object.entries(handlers)) {
          views.addEventListener(name, (event) => handler(exactJSON(event.data)));
        }

        function entryRow(entry) {
          return el("li", { "data-event": entry.event },
            el("time", {}, clock(entry.publishedAt)), el("span", { class: "name" }, entry.event),
            el("span", { class: "seq" }, "#" + entry.sequence + " "), el("span", { class: "payload" }, entry.payload));
        }

        function prepend(list, entries, limit) {
          list.prepend(...entries.slice().reverse().map(entryRow));
          while (list.children.length > limit) list.lastChild.remove();
        }

        // While paused the tail stands still; what arrives meanwhile is kept (the newest 200, as the
        // list shows) and added on Resume.
        let tail = null, paused = false, missed = 0, held = [];
        function openTail() {
          if (tail) tail.close();
          $("tail").replaceChildren();
          missed = 0;
          held = [];
          const filter = $("tail-filter").value.trim();
          tail = new EventSource("/tail" + (filter ? "?filter=" + encodeURIComponent(filter) : ""));
          tail.addEventListener("tail", (event) => {
            const update = exactJSON(event.data);
            if (paused) {
              missed += update.events.length + update.skipped;
              held = held.concat(update.events).slice(-200);
            }
            else {
              prepend($("tail"), update.events, 200);
              if (update.skipped) missed += update.skipped;
            }
            $("tail-note").textContent = paused ? "paused, " + missed + " new" : (missed ? missed + " not shown (busy bus)" : "");
          });
        }
        let filterTimer = null;
        $("tail-filter").addEventListener("input", () => { clearTimeout(filterTimer); filterTimer = setTimeout(openTail, 300); });
        $("tail-pause").addEventListener("click", () => {
          paused = !paused;
          $("tail-pause").textContent = paused ? "Resume" : "Pause";
          if (paused) {
            $("tail-note").textContent = "paused";
            return;
          }
          prepend($("tail"), held, 200);
          $("tail-note").textContent = missed > held.length
            ? missed + " arrived while paused; the newest " + held.length + " are shown" : "";
          missed = 0;
          held = [];
        });
        // A hidden tail closes its stream: with no tail and no trace view open, the console stops
        // reading the bus (the rates come from the broker's counters).
        $("tail-toggle").addEventListener("click", () => {
          const hiding = tail !== null;
          if (hiding) {
            tail.close();
            tail = null;
            $("tail").replaceChildren();
            $("tail-note").textContent = "hidden: the bus is not read for it";
          } else {
            $("tail-note").textContent = "";
            openTail();
          }
          $("tail-toggle").textContent = hiding ? "Show" : "Hide";
          $("tail-pause").disabled = hiding;
          $("tail-filter").disabled = hiding;
        });
        openTail();

        let trace = null;
        $("trace-details").addEventListener("toggle", () => {
          if ($("trace-details").open) {
            trace = new EventSource("/trace");
            trace.addEventListener("trace", (event) => prepend($("trace"), exactJSON(event.data).events, 300));
          } else if (trace) {
            trace.close();
            trace = null;
          }
        });

        // MARK: actions

        $("action-form").addEventListener("submit", async (event) => {
          event.preventDefault();
          const command = $("action-command").value, line = $("action-args").value;
          const output = $("action-output");
          output.removeAttribute("data-status");
          output.textContent = "$ lifeline " + command + " " + line + "\n…";
          try {
            const response = await fetch("/api/action", {
              method: "POST", headers: { "Content-Type": "application/json", "X-Lifeline-Token": token },
              body: JSON.stringify({ command, line }),
            });
            if (!response.ok) {
              output.textContent = "$ lifeline " + command + " " + line + "\n" + (await response.text());
              output.setAttribute("data-status", String(response.status));
              return;
            }
            const result = await response.json();
            output.textContent = "$ lifeline " + command + " " + line + "\n" + result.output + result.error + "exit " + result.status;
            output.setAttribute("data-status", String(result.status));
          } catch (error) {
            output.textContent = "$ lifeline " + command + " " + line + "\nthe console did not answer: " + error;
            output.setAttribute("data-status", "-1");
          }
        });
        """#
}

/// The console's page, served from the binary: no network fetch, no CDN. The page runs only its own
/// script (the Content-Security-Policy forbids inline code) and writes what it shows as text.
enum ConsoleAssets {
    /// The page, carrying the token its actions send (hexadecimal or a checked token file's text,
    /// so it needs no escaping beyond what ``escape(_:)`` does).
    static func page(token: String) -> String {
        """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="lifeline-token" content="\(escape(token))">
        <title>Lifeline console</title>
        <link rel="stylesheet" href="/console.css">
        <script src="/console.js" defer></script>
        </head>
        <body>
        <header>
          <h1>Lifeline</h1>
          <span id="broker" class="muted">connecting…</span>
          <span id="lifecycle" class="pill"></span>
          <span id="connection" class="pill">connecting</span>
        </header>
        <div id="banner" hidden></div>
        <main>
          <section id="service-view" class="wide" hidden>
            <h2><a href="#" id="service-back">← all services</a> <span id="service-title"></span>
              <small id="service-summary"></small></h2>
            <div class="controls">
              <span class="muted">range</span>
              <button type="button" data-range="5m" class="range">5 min</button>
              <button type="button" data-range="1h" class="range">1 h</button>
              <span id="service-note" class="muted"></span>
            </div>
            <canvas id="service-chart" width="900" height="170" aria-label="the service's calls and events over time"></canvas>
            <div id="service-legend" class="legend"></div>
            <canvas id="service-latency" width="900" height="140" aria-label="each method's p50 and p99 over time"></canvas>
            <div id="service-latency-legend" class="legend"></div>
            <h3>Instances</h3>
            <table id="service-instances"><thead><tr><th>instance</th><th>pid</th><th>host</th><th>in flight</th>
              <th>answered</th><th>connected</th><th>queued</th><th>dropped</th></tr></thead><tbody></tbody></table>
            <h3>Methods</h3>
            <table id="service-methods"><thead><tr><th>method</th><th>requests</th><th>errors</th><th>timeouts</th>
              <th>mean ms</th><th>p50 ms</th><th>p99 ms</th><th>takes</th><th>answers</th><th>summary</th></tr></thead><tbody></tbody></table>
            <h3>Events</h3>
            <table id="service-events"><thead><tr><th>event</th><th>handled</th><th>priority</th><th>deadline ms</th></tr></thead><tbody></tbody></table>
            <p id="service-figures" class="muted"></p>
            <h3>Boot tasks</h3>
            <table id="service-boot"><thead><tr><th>task</th><th>phase</th><th>priority</th><th>after</th><th>required</th><th>runs once</th></tr></thead><tbody></tbody></table>
            <h3>Description</h3>
            <pre id="service-describe"></pre>
          </section>
          <section id="services-panel" class="wide">
            <h2>Services <small id="services-count"></small>
              <input id="services-filter" placeholder="filter by name" aria-label="filter services by name"></h2>
            <table id="services"><thead><tr><th data-sort="name">name</th><th data-sort="state">state</th>
              <th data-sort="instances">instances</th><th data-sort="pid">pid</th><th data-sort="host">host</th>
              <th data-sort="events">events</th><th data-sort="methods">methods</th><th data-sort="uptime">uptime</th>
              <th data-sort="heartbeat">heartbeat</th><th data-sort="handled">handled</th><th data-sort="dropped">dropped</th>
              </tr></thead><tbody></tbody></table>
            <p id="services-note" class="muted"></p>
            <h3>Calls by method</h3>
            <table id="calls"><thead><tr><th>service</th><th>method</th><th>requests</th><th>errors</th><th>timeouts</th>
              <th>p50 ms</th><th>p99 ms</th></tr></thead><tbody></tbody></table>
          </section>
          <section id="group-panel" class="wide" hidden>
            <h2>Broker group <span id="group-name"></span> <small id="group-summary"></small></h2>
            <table id="group"><thead><tr><th>member</th><th>role</th><th>holds up to</th><th>behind by</th>
              <th>last heard</th></tr></thead><tbody></tbody></table>
            <p id="group-etcd" class="muted"></p>
          </section>
          <section id="bus-panel">
            <h2>Bus <small id="bus-rate"></small></h2>
            <div class="controls">
              <span class="muted">range</span>
              <button type="button" data-range="5m" class="range" aria-pressed="true">5 min</button>
              <button type="button" data-range="1h" class="range" aria-pressed="false">1 h</button>
            </div>
            <canvas id="chart" width="640" height="150" aria-label="events per second by name"></canvas>
            <div id="legend" class="legend"></div>
            <table id="rates"><thead><tr><th>event</th><th>last second</th><th>last minute</th></tr></thead><tbody></tbody></table>
          </section>
          <section id="tail-panel">
            <h2>Latest events</h2>
            <div class="controls">
              <input id="tail-filter" placeholder="filter: part of a name, or a pattern (did*, com.example.*)" autocomplete="off">
              <button id="tail-pause" type="button">Pause</button>
              <button id="tail-toggle" type="button" title="the console reads the bus only while a tail or the traces are shown">Hide</button>
              <span id="tail-note" class="muted"></span>
            </div>
            <ol id="tail"></ol>
          </section>
          <section id="actors-panel">
            <h2>Actors by key</h2>
            <table id="actors"><thead><tr><th>actor</th><th>pid</th><th>host</th><th>since</th><th>calls</th><th>in flight</th><th>state</th></tr></thead><tbody></tbody></table>
            <p id="actors-note" class="muted"></p>
          </section>
          <section id="stack-panel">
            <h2>Micro-app stack</h2>
            <table id="stack"><thead><tr><th>session</th><th>app</th><th>state</th><th>mode</th><th>host</th><th>parent</th></tr></thead><tbody></tbody></table>
            <p id="stack-note" class="muted"></p>
          </section>
          <section id="boot-panel">
            <h2>Boot</h2>
            <img id="boot-svg" alt="the boot's timeline">
            <pre id="boot-text"></pre>
          </section>
          <section id="trace-panel" class="wide">
            <details id="trace-details">
              <summary>Traces: dispatch steps and calls (traced only while this is open)</summary>
              <p id="trace-note" class="muted"></p>
              <ol id="trace"></ol>
            </details>
          </section>
          <section id="actions-panel" class="wide">
            <h2>Actions</h2>
            <form id="action-form">
              <span class="prompt">lifeline</span>
              <select id="action-command">
                <option>publish</option><option>call</option><option>apps</option><option>dispatch</option><option>boot</option>
              </select>
              <input id="action-args" placeholder="arguments, as on the command line: didBecomeActive · push status · action login signIn '{&quot;user&quot;: &quot;ana&quot;}'" autocomplete="off">
              <button id="action-run" type="submit">Run</button>
            </form>
            <pre id="action-output"></pre>
          </section>
        </main>
        </body>
        </html>
        """
    }

    /// `text` with the characters that mean something in HTML written as entities.
    static func escape(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}

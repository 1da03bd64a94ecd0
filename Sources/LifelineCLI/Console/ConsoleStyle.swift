extension ConsoleAssets {
    /// The page's style sheet.
    static let style = """
        :root { --bg: #f6f7f9; --panel: #fff; --text: #1d2330; --muted: #6b7385; --line: #e3e6ec;
          --up: #1a7f37; --warn: #b26b00; --gone: #b3261e; --accent: #2f5bd3; }
        * { box-sizing: border-box; }
        body { margin: 0; font: 13px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; background: var(--bg);
          color: var(--text); }
        header { display: flex; gap: 12px; align-items: center; padding: 10px 18px; background: #1d2330; color: #fff; }
        header h1 { font-size: 16px; margin: 0 8px 0 0; }
        header .muted { color: #c5cad6; }
        .pill { border-radius: 10px; padding: 1px 9px; background: #3a4256; font-size: 12px; }
        .pill.live { background: var(--up); }
        .pill.down { background: var(--gone); }
        tr[data-stale="true"] { opacity: 0.5; }
        th[data-sort] { cursor: pointer; user-select: none; }
        th[data-order="ascending"]::after { content: " ▲"; }
        th[data-order="descending"]::after { content: " ▼"; }
        #services-filter { margin-left: 12px; font-size: 13px; padding: 2px 6px; }
        #banner { background: #fdecea; color: var(--gone); padding: 8px 18px; border-bottom: 1px solid #f5c2bd; }
        main { display: grid; grid-template-columns: repeat(auto-fit, minmax(560px, 1fr)); gap: 14px; padding: 14px 18px; }
        section { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: 10px 14px;
          min-width: 0; overflow: auto; }
        section.wide { grid-column: 1 / -1; }
        h2 { font-size: 14px; margin: 0 0 8px; }
        h2 small { color: var(--muted); font-weight: normal; margin-left: 6px; }
        h3 { font-size: 13px; margin: 12px 0 6px; }
        table { border-collapse: collapse; width: 100%; }
        th, td { text-align: left; padding: 3px 8px 3px 0; border-bottom: 1px solid var(--line); white-space: nowrap; }
        th { color: var(--muted); font-weight: 600; font-size: 12px; }
        td.num, th.num { text-align: right; }
        td.list { max-width: 280px; overflow: hidden; text-overflow: ellipsis; }
        .muted { color: var(--muted); }
        .state { font-weight: 600; }
        tr[data-state="up"] .state, tr[data-state="running"] .state { color: var(--up); }
        tr[data-state="silent"] .state, tr[data-state="paused"] .state { color: var(--warn); }
        tr[data-state="leader"] .state { color: var(--accent); }
        tr[data-state="standby"] .state { color: var(--up); }
        tr[data-state="unreached"] .state { color: var(--gone); }
        tr[data-state="gone"] { color: var(--muted); text-decoration: line-through; }
        tr[data-state="gone"] .state { color: var(--gone); text-decoration: none; }
        tr.top td:first-child::after { content: " ← top"; color: var(--accent); font-weight: 600; }
        #chart { width: 100%; max-width: 640px; height: 150px; border: 1px solid var(--line); border-radius: 4px; }
        #service-chart { width: 100%; max-width: 900px; height: 170px; border: 1px solid var(--line); border-radius: 4px; }
        #service-latency { width: 100%; max-width: 900px; height: 140px; border: 1px solid var(--line); border-radius: 4px;
          margin-top: 8px; }
        body[data-view="service"] main > section:not(#service-view) { display: none; }
        button.range[aria-pressed="true"] { background: #1d2330; border-color: #1d2330; }
        .legend span { display: inline-block; margin: 4px 12px 4px 0; font-size: 12px; }
        .legend i { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 4px; }
        .controls { display: flex; gap: 8px; align-items: center; margin-bottom: 6px; }
        input, select, button { font: inherit; padding: 4px 8px; border: 1px solid #c9ced8; border-radius: 4px; }
        input { flex: 1; min-width: 0; }
        button { background: var(--accent); color: #fff; border-color: var(--accent); cursor: pointer; }
        ol { list-style: none; margin: 0; padding: 0; max-height: 320px; overflow: auto;
          font: 12px/1.5 ui-monospace, "DejaVu Sans Mono", monospace; }
        ol li { padding: 2px 0; border-bottom: 1px solid var(--line); overflow-wrap: anywhere; }
        ol li .name { color: var(--accent); font-weight: 600; margin: 0 6px; }
        ol li .seq, ol li time { color: var(--muted); }
        pre { font: 12px/1.5 ui-monospace, "DejaVu Sans Mono", monospace; background: #f0f2f5; padding: 8px;
          border-radius: 4px; overflow: auto; white-space: pre-wrap; margin: 8px 0 0; }
        #boot-svg { max-width: 100%; display: block; }
        #action-form { display: flex; gap: 8px; align-items: center; }
        #action-form .prompt { font-family: ui-monospace, monospace; color: var(--muted); }
        #action-output[data-status="0"] { border-left: 3px solid var(--up); }
        #action-output[data-status]:not([data-status="0"]) { border-left: 3px solid var(--gone); }
        summary { cursor: pointer; font-weight: 600; }
        """
}

// run.js: a run's page (#/jobs/NAME/runs/RUN): counts per source and sink,
// the error, the attempt chain and the input and output manifests, paged.
"use strict";
(function (TM) {
  var pageSize = 100;

  function countsTable(test, what, counts, ended) {
    var keys = TM.sortedKeys(counts);
    if (!keys.length) {
      return TM.el("p", { "class": "muted", "data-test": test + "-none" },
        ended ? "None counted: the run ended before it counted what it " + (what === "sources" ? "read." : "wrote.") : "No " + what + ".");
    }
    // The other counts are the core's rejected and skipped rows and what
    // the source's kind counts, in the order the count names them.
    var shown = { files: true, bytes: true, rows: true, kind: true, table: true, keys_after: true, keys_up_to: true };
    return TM.table(test, [what === "sources" ? "Source" : "Sink", { text: "Files", num: true }, { text: "Bytes", num: true }, { text: "Rows", num: true }, "Other"],
      keys.map(function (k) {
        var c = counts[k];
        var other = Object.keys(c).filter(function (f) { return !shown[f] && typeof c[f] === "number" && c[f]; })
          .map(function (f) { return f.replace(/_/g, " ") + " " + TM.fmt.int(c[f]); });
        if (c.keys_after || c.keys_up_to) other.push("keys (" + (c.keys_after || "start") + ", " + (c.keys_up_to || "") + "]");
        return TM.row({ "data-test": what === "sources" ? "source-row" : "sink-row", "data-ctx": k,
          "data-files": c.files, "data-bytes": c.bytes, "data-rows": c.rows }, [
          { text: k, test: "ctx" },
          { text: TM.fmt.int(c.files), num: true, test: "files" },
          { text: TM.fmt.bytes(c.bytes), num: true, test: "bytes", title: c.bytes + " bytes" },
          { text: TM.fmt.int(c.rows), num: true, test: "rows" },
          { text: other.join(", "), test: "other" }
        ]);
      }));
  }

  function inputRow(i) {
    if (i.range !== undefined || i.path === undefined) {
      var rg = typeof i.range === "string" ? i.range : JSON.stringify(i.range);
      return TM.row({ "data-test": "input-row", "data-ctx": i.ctx, "data-rows": i.rows }, [
        { text: i.ctx, test: "ctx" }, { text: "range " + rg, test: "path" }, "", { text: TM.fmt.int(i.rows), num: true, test: "rows" }, "", ""]);
    }
    return TM.row({ "data-test": "input-row", "data-ctx": i.ctx, "data-path": i.path, "data-size": i.size }, [
      { text: i.ctx, test: "ctx" }, { text: i.path, test: "path" },
      { text: TM.fmt.bytes(i.size), num: true, test: "size" }, "",
      { text: TM.fmt.nanos(i.mtime), test: "mtime" }, { text: i.etag || "", test: "etag" }]);
  }

  function outputRow(o) {
    var where = o.table ? (o.table.table || o.final) : ((o.root ? o.root.replace(/\/$/, "") + "/" : "") + o.final);
    return TM.row({ "data-test": "output-row", "data-sink": o.sink || "", "data-final": o.final, "data-rows": o.rows, "data-bytes": o.bytes,
      "data-published": o.published ? "true" : "false" }, [
      { text: o.sink || (o.rejects ? "rejects of " + o.rejects : ""), test: "sink" },
      { text: o.kind, test: "kind" },
      { text: where, test: "final" },
      { text: TM.fmt.int(o.rows), num: true, test: "rows" },
      { text: TM.fmt.bytes(o.bytes), num: true, test: "bytes" },
      { text: o.published ? "yes" : "no", test: "published" }]);
  }

  // manifest is one paged list (inputs or outputs) of a run.
  function manifest(into, test, head, rowFn, first, fetchPage) {
    var body = TM.el("div", { "data-test": test });
    into.appendChild(body);
    function show(list, offset) {
      TM.clear(body);
      var items = (list && list.items) || [], total = (list && list.total) || 0;
      if (!total) { body.appendChild(TM.el("p", { "class": "muted", "data-test": test + "-none" }, "None.")); return; }
      body.appendChild(TM.table(test + "-table", head, items.map(rowFn)));
      var prev = TM.el("button", { type: "button", "data-test": test + "-prev", disabled: offset <= 0 }, "Previous");
      var next = TM.el("button", { type: "button", "data-test": test + "-next", disabled: offset + items.length >= total }, "Next");
      var info = TM.el("span", { "data-test": test + "-range", "data-offset": offset, "data-total": total },
        (items.length ? (offset + 1) + "–" + (offset + items.length) : "0") + " of " + TM.fmt.int(total));
      function go(off) {
        prev.disabled = next.disabled = true;
        fetchPage(off).then(function (list) { show(list, off); }, function (err) { TM.showError(body, err); });
      }
      prev.addEventListener("click", function () { go(Math.max(0, offset - pageSize)); });
      next.addEventListener("click", function () { go(offset + pageSize); });
      body.appendChild(TM.el("div", { "class": "pager" }, prev, info, next));
    }
    show(first, 0);
  }

  function attemptsTable(job, run, attempts) {
    if (!attempts || !attempts.length) return TM.el("p", { "class": "muted", "data-test": "attempts-none" }, "No failed attempts before this run.");
    return TM.table("attempts", ["Run", "Attempt", "Status", "Started", "Error"], attempts.map(function (a) {
      return TM.row({ "data-test": "attempt-row", "data-run": a.run_id, "data-status": a.status, "class": a.run_id === run ? "current" : null }, [
        { node: TM.link(TM.routes.run(job, a.run_id), a.run_id) },
        { text: String(a.attempt), num: true },
        { node: TM.status(a) },
        TM.fmt.time(a.started_at),
        { text: a.error || "", test: "error" }]);
    }));
  }

  // fieldDiffs lists what changed in one source ctx's state between the
  // version before (b, null: the ctx was new) and after (a, null: gone):
  // [field, before, after] texts. The fields the source's kind counts are
  // those the server sends as its kind shows them (sb, sa:
  // [{label, value, format}]).
  function fieldDiffs(b, a, sb, sa) {
    if (!b && !a) return [];
    if (!b) b = {};
    if (!a) a = {};
    var out = [];
    function cmp(field, f) {
      var x = f(b), y = f(a);
      if (x !== y) out.push([field, x, y]);
    }
    function has(s) { return Object.keys(s).length > 0; }
    if (!has(b)) out.push(["source", "none (new ctx)", a.kind + (a.tracking ? ", " + a.tracking + " tracking" : "")]);
    if (!has(a)) out.push(["source", b.kind || "", "gone"]);
    var labels = [], before = {}, after = {};
    function take(list, into) {
      (list || []).forEach(function (p) {
        if (!(p.label in before) && !(p.label in after)) labels.push(p.label);
        var f = p.format && TM.fmt[p.format];
        into[p.label] = f ? f(p.value) : String(p.value);
      });
    }
    take(sb, before);
    take(sa, after);
    labels.forEach(function (l) {
      var x = before[l] || "", y = after[l] || "";
      if (x !== y) out.push([l, x, y]);
    });
    cmp("fingerprint", function (s) { return s.fingerprint || ""; });
    var cols = function (s) { var m = {}; (s.schema || []).forEach(function (c) { m[c.name] = c.type; }); return m; };
    var cb = cols(b), ca = cols(a);
    Object.keys(ca).sort().forEach(function (n) {
      if (!(n in cb)) { if (has(b)) out.push(["column added", "", n + " " + ca[n]]); }
      else if (cb[n] !== ca[n]) out.push(["column type", n + " " + cb[n], n + " " + ca[n]]);
    });
    Object.keys(cb).sort().forEach(function (n) { if (!(n in ca) && has(a)) out.push(["column removed", n + " " + cb[n], ""]); });
    return out;
  }

  // diffSection shows a run's bookmark diff (what its commit changed).
  function diffSection(d) {
    if (!d) return TM.el("p", { "class": "muted", "data-test": "diff-none" }, "This run did not commit a bookmark version.");
    var box = TM.el("div", { "data-test": "bookmark-diff", "data-version": d.version, "data-before": d.before });
    box.appendChild(TM.el("p", null, "Version " + d.version + " against " + (d.before ? "version " + d.before : "the empty bookmark") + "."));
    var rows = [];
    TM.sortedKeys(d.sources).forEach(function (k) {
      var p = d.sources[k];
      fieldDiffs(p.before, p.after, p.shown_before, p.shown_after).forEach(function (f) {
        rows.push(TM.row({ "data-test": "diff-row", "data-ctx": k, "data-field": f[0] }, [
          { text: k, test: "diff-ctx" }, { text: f[0], test: "diff-field" },
          { text: f[1], test: "diff-before" }, { text: f[2], test: "diff-after" }]));
      });
    });
    if (!rows.length) box.appendChild(TM.el("p", { "class": "muted", "data-test": "diff-same" }, "No source state changed."));
    else box.appendChild(TM.table("diff-table", ["Source", "Field", "Before", "After"], rows));
    return box;
  }

  TM.pages = TM.pages || {};
  // TM.pages.run renders a run's page.
  TM.pages.run = function (main, job, run) {
    TM.crumbs([[TM.routes.job(job), job], [TM.routes.run(job, run), run]]);
    main.appendChild(TM.el("h1", { "data-test": "run-id", "data-run": run }, "Run " + run));
    var body = TM.el("div", { "data-test": "run" }, TM.message("info", "Loading the run…"));
    main.appendChild(body);
    var path = TM.api.job(job) + "/runs/" + encodeURIComponent(run);
    function page(off) { return TM.api.get(path + "?offset=" + off + "&limit=" + pageSize); }
    return page(0).then(function (d) {
      TM.clear(body);
      var r = d.run;
      // A failed or running run committed no version: its version field
      // is 0 (enable mode), so show the version it started from instead.
      var committed = r.status === "succeeded" || r.mode !== "enable";
      body.appendChild(TM.kv("run-kv", [
        ["job", TM.link(TM.routes.job(job), r.job), "job"],
        ["status", TM.status(r), "run-status"],
        ["attempt", String(r.attempt), "attempt"],
        ["mode", r.mode, "mode"],
        ["started", TM.fmt.time(r.started_at), "started-at"],
        ["finished", TM.fmt.time(r.finished_at), "finished-at"],
        ["duration", TM.fmt.duration(r.duration_ms), "duration"],
        committed ? ["bookmark version", String(r.version), "version"] : ["bookmark version", "none committed", "version"],
        committed ? null : ["started from", d.started_from === undefined || d.started_from === null ? "unknown" :
          d.started_from ? "version " + d.started_from : "the empty bookmark (version 0)", "started-from"],
        ["rows in / out", TM.fmt.int(TM.sum(r.sources, "rows")) + " / " + TM.fmt.int(TM.sum(r.sinks, "rows")), "rows-in-out"],
        r.undone ? ["undone", r.purged ? "yes, and its output purged" : "yes (reset or rewound away)", "undone"] : null
      ]));
      if (r.error) {
        body.appendChild(TM.el("h2", null, "Error"));
        body.appendChild(TM.el("pre", { "class": "errortext", "data-test": "run-error" }, r.error));
      }
      body.appendChild(TM.el("h2", null, "Sources"));
      var early = r.status === "failed";
      body.appendChild(countsTable("sources", "sources", r.sources, early));
      body.appendChild(TM.el("h2", null, "Sinks"));
      body.appendChild(countsTable("sinks", "sinks", r.sinks, early));
      body.appendChild(TM.el("h2", null, "Bookmark diff"));
      body.appendChild(diffSection(d.bookmark_diff));
      body.appendChild(TM.el("h2", null, "Attempt chain"));
      body.appendChild(attemptsTable(job, run, d.attempts));
      body.appendChild(TM.el("h2", null, "Inputs"));
      if (r.status !== "succeeded" && !(d.inputs && d.inputs.total)) {
        body.appendChild(TM.el("p", { "class": "muted", "data-test": "inputs-not-recorded" },
          "The state store records a run's inputs when it commits; this run did not, so what it planned to read is not recorded. " +
          "`tidemark plan` (or Plan now on the job page) shows what the next run would read."));
      }
      manifest(body, "inputs", ["Source", "File or range", { text: "Size", num: true }, { text: "Rows", num: true }, "Modified", "ETag"], inputRow, d.inputs,
        function (off) { return page(off).then(function (x) { return x.inputs; }); });
      body.appendChild(TM.el("h2", null, "Outputs"));
      manifest(body, "outputs", ["Sink", "Kind", "Location", { text: "Rows", num: true }, { text: "Bytes", num: true }, "Published"], outputRow, d.outputs,
        function (off) { return page(off).then(function (x) { return x.outputs; }); });
    }, function (err) { TM.showError(body, err); });
  };
})(window.TM);

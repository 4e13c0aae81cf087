// job.js: a job's page (#/jobs/NAME): the run history (paged with
// next_before), charts, bookmark per ctx, and the actions when they are on.
"use strict";
(function (TM) {
  var pageSize = 50;
  // historySize is how many bookmark versions the job page looks through
  // for resets and rewinds.
  var historySize = 200;

  function schemaTable(cols) {
    if (!cols || !cols.length) return null;
    return TM.table("schema", ["Column", "Type"], cols.map(function (c) {
      return [{ text: c.name, test: "column-name" }, { text: c.type, test: "column-type" }];
    }));
  }

  // shownPairs turns what the server says the source's kind shows
  // ({label, value, format, test}) into kv pairs.
  function shownPairs(list) {
    return (list || []).map(function (p) {
      var f = p.format && TM.fmt[p.format];
      return [p.label, f ? f(p.value) : String(p.value), p.test];
    });
  }

  // newestTable lists an exact source's most recently processed files.
  function newestTable(ctx, files) {
    if (!files) return null;
    if (!files.length) return TM.message("info", "No recently processed files found in the last runs.");
    return TM.table("newest-files", ["Newest processed file", { text: "Size", num: true }, "Modified"], files.map(function (f) {
      return TM.row({ "data-test": "newest-file-row", "data-ctx": ctx, "data-path": f.path }, [
        { text: f.path, test: "newest-path" }, { text: TM.fmt.bytes(f.size), num: true, test: "newest-size" },
        { text: TM.fmt.nanos(f.mtime), test: "newest-mtime" }]);
    }));
  }

  function sourceSection(ctx, s, newest, shown) {
    var sec = TM.el("section", { "data-test": "bookmark-source", "data-ctx": ctx, "data-kind": s.kind, "data-tracking": s.tracking || null });
    sec.appendChild(TM.el("h3", null, "Source " + ctx));
    var pairs = [["kind", s.kind + (s.tracking ? ", " + s.tracking + " tracking" : ""), "kind"]];
    pairs = pairs.concat(shownPairs(shown && shown[ctx]));
    pairs.push(["fingerprint", s.fingerprint || "", "fingerprint"]);
    if (s.describe) pairs.push(["source", s.describe, "describe"]);
    sec.appendChild(TM.kv("bookmark-kv", pairs));
    if (s.band && s.band.length) {
      sec.appendChild(TM.table("band", ["File in band", { text: "Size", num: true }, "Modified"], s.band.map(function (f) {
        return [{ text: f.path, test: "band-path" }, { text: TM.fmt.bytes(f.size), num: true }, TM.fmt.nanos(f.mtime)];
      })));
    }
    // The server lists newest files for the sources whose kind records files.
    TM.append(sec, newestTable(ctx, newest && newest[ctx]));
    TM.append(sec, schemaTable(s.schema));
    return sec;
  }

  function bookmarkSection(into, bm, newest, shown) {
    TM.clear(into);
    into.appendChild(TM.kv("bookmark-head", [
      ["bookmark version", String(bm.version), "bookmark-version"],
      ["from run", bm.run_id || "none", "bookmark-run"],
      bm.updated_at ? ["updated", TM.fmt.time(bm.updated_at), "bookmark-updated"] : null
    ]));
    var keys = TM.sortedKeys(bm.sources);
    if (!keys.length) into.appendChild(TM.message("info", "The bookmark is empty: the next run reads everything."));
    keys.forEach(function (k) { into.appendChild(sourceSection(k, bm.sources[k], newest, shown)); });
  }

  function runRow(job, r, actions) {
    var act = null;
    if (actions && r.status === "succeeded" && !r.undone) {
      act = TM.el("button", { type: "button", "data-test": "rewind", "data-run": r.run_id,
        onclick: function () { TM.actions.reset(job, r.run_id); } }, "Rewind to here");
    }
    return TM.row({ "data-test": "run-row", "data-run": r.run_id, "data-seq": r.seq || null, "data-status": r.status,
      "data-undone": r.undone ? "true" : null, "class": r.undone ? "undone" : null,
      "data-rows-in": TM.sum(r.sources, "rows"), "data-rows-out": TM.sum(r.sinks, "rows"),
      "data-bytes-in": TM.sum(r.sources, "bytes"), "data-bytes-out": TM.sum(r.sinks, "bytes") }, [
      { text: r.seq === undefined ? "" : String(r.seq), num: true, test: "seq" },
      { node: TM.link(TM.routes.run(job, r.run_id), r.run_id, { "data-test": "run-link" }) },
      { text: String(r.attempt), num: true, test: "attempt" },
      { node: TM.status(r) },
      { text: r.mode, test: "mode" },
      { text: TM.fmt.time(r.started_at), test: "started-at" },
      { text: TM.fmt.duration(r.duration_ms), num: true, test: "duration" },
      { text: TM.fmt.int(TM.sum(r.sources, "rows")), num: true, test: "rows-in" },
      { text: TM.fmt.int(TM.sum(r.sinks, "rows")), num: true, test: "rows-out" },
      { text: TM.fmt.bytes(TM.sum(r.sources, "bytes")), num: true, test: "bytes-in" },
      { text: TM.fmt.bytes(TM.sum(r.sinks, "bytes")), num: true, test: "bytes-out" },
      // A failed or running run of enable mode committed no version.
      r.mode === "enable" && r.status !== "succeeded" && !r.version ?
        { text: "—", num: true, test: "version", title: "committed no version" } :
        { text: String(r.version), num: true, test: "version" },
      { text: r.error ? (r.error.length > 160 ? r.error.slice(0, 160) + "…" : r.error) : "", test: "error", title: r.error || null },
      { node: act }
    ]);
  }

  // resetsSection lists the resets and rewinds among the job's bookmark
  // versions (GET /history), with when and who asked, and gives them to
  // the charts (marks.list, then redraw).
  function resetsSection(job, into, marks) {
    return TM.api.get(TM.api.job(job) + "/history?limit=" + historySize).then(function (data) {
      TM.clear(into);
      var rows = (data.versions || []).filter(function (v) { return v.kind !== "commit"; });
      marks.list = rows;
      marks.redraw();
      if (!rows.length) {
        into.appendChild(TM.el("p", { "class": "muted", "data-test": "history-none" }, "No resets or rewinds among the last " + historySize + " bookmark versions."));
        return;
      }
      into.appendChild(TM.table("history-table", [{ text: "Version", num: true }, "Action", "When", "Asked by"], rows.map(function (v) {
        return TM.row({ "data-test": "history-row", "data-kind": v.kind, "data-by": v.by || "", "data-version": v.version, "data-run": v.run_id || null }, [
          { text: String(v.version), num: true, test: "history-version" },
          { node: v.kind === "rewind" ? TM.el("span", null, "rewind to ", TM.link(TM.routes.run(job, v.run_id), v.run_id)) : "reset (bookmark cleared)", test: "history-kind" },
          { text: TM.fmt.time(v.at), test: "history-at" },
          { text: v.by || "unknown (an older tidemark)", test: "history-by" }]);
      })));
    }, function (err) { TM.showError(into, err); });
  }

  function history(job, into, chartBox, actions, marks) {
    var runs = [];
    var tbody = TM.el("tbody");
    var head = ["#", "Run", "Attempt", "Status", "Mode", "Started", "Duration", "Rows in", "Rows out", "Bytes in", "Bytes out", "Version", "Error", ""];
    var table = TM.el("table", { "data-test": "runs-table" },
      TM.el("thead", null, TM.el("tr", null, head.map(function (h) { return TM.el("th", null, h); }))), tbody);
    var more = TM.el("button", { type: "button", "data-test": "runs-more", hidden: true }, "Older runs");
    var status = TM.el("span", { "class": "muted", "data-test": "runs-count" });
    var errBox = TM.el("div");
    into.appendChild(table);
    into.appendChild(TM.el("div", { "class": "pager" }, more, status));
    into.appendChild(errBox);
    function load(before) {
      more.disabled = true;
      var q = "/runs?limit=" + pageSize + (before ? "&before=" + encodeURIComponent(before) : "");
      return TM.api.get(TM.api.job(job) + q).then(function (data) {
        TM.clear(errBox);
        (data.runs || []).forEach(function (r) { runs.push(r); tbody.appendChild(runRow(job, r, actions)); });
        status.textContent = runs.length + " runs shown" + (data.next_before ? ", older ones not yet" : "");
        more.hidden = !data.next_before;
        more.disabled = false;
        more.onclick = function () { load(data.next_before); };
        marks.redraw();
      }, function (err) { more.disabled = false; TM.showError(errBox, err); });
    }
    marks.redraw = function () { TM.charts(chartBox, runs, marks.list); };
    return load(0);
  }

  TM.pages = TM.pages || {};
  // TM.pages.job renders a job's page.
  TM.pages.job = function (main, job) {
    TM.crumbs([[TM.routes.job(job), job]]);
    main.appendChild(TM.el("h1", { "data-test": "job-name", "data-job": job }, job));
    var top = TM.el("div", { "data-test": "job-summary" }, TM.message("info", "Loading the job…"));
    main.appendChild(top);
    return Promise.all([TM.api.get(TM.api.job(job)), TM.api.session()]).then(function (res) {
      var j = res[0], actions = !!(res[1] && res[1].actions);
      TM.clear(top);
      var r = j.last_run;
      top.appendChild(TM.kv("job-kv", [
        ["bookmark version", String(j.version), "version"],
        ["last run", r ? TM.link(TM.routes.run(job, r.run_id), r.run_id, { "data-test": "last-run-link" }) : "none", "last-run"],
        ["last status", TM.status(r), "last-status"],
        j.job_file ? ["job file", j.job_file, "job-file"] : null
      ]));
      if (actions) top.appendChild(TM.actions.panel(job));
      // The run history first: it is what an operator comes for.
      main.appendChild(TM.el("h2", null, "Run history"));
      var hist = TM.el("div", { "data-test": "history" });
      main.appendChild(hist);
      main.appendChild(TM.el("h2", null, "Runs over time"));
      var chartBox = TM.el("div", { "class": "charts", "data-test": "charts" });
      main.appendChild(chartBox);
      main.appendChild(TM.el("h2", null, "Bookmark"));
      var bm = TM.el("div", { "data-test": "bookmark" });
      main.appendChild(bm);
      bookmarkSection(bm, j.bookmark || { version: j.version, sources: {} }, j.newest_files, j.shown);
      main.appendChild(TM.el("h2", null, "Resets and rewinds"));
      var resets = TM.el("div", { "data-test": "resets" }, TM.message("info", "Loading the bookmark history…"));
      main.appendChild(resets);
      var marks = { list: [], redraw: function () {} };
      var loaded = history(job, hist, chartBox, actions, marks);
      return Promise.all([loaded, resetsSection(job, resets, marks)]);
    }, function (err) { TM.showError(top, err); });
  };
})(window.TM);

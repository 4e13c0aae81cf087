// jobs.js: the jobs page (#/): every job with its last run, bookmark
// version and backlog, from GET /api/v1/jobs.
"use strict";
(function (TM) {
  // backlogCells sums a plan over its sources: files, bytes, rows. A plan
  // that failed is unknown here; its error is in the Last error column.
  function backlogCells(j) {
    if (j.backlog_error) {
      return [{ node: TM.unknown("unknown: the plan failed (see Last error)", "backlog-error"), num: true }, "", ""];
    }
    var b = j.backlog;
    if (!b) return [{ node: TM.el("span", { "class": "muted", "data-test": "backlog-none" }, "not known") }, "", ""];
    return [
      { text: TM.fmt.int(TM.sum(b.sources, "files")), num: true, test: "backlog-files" },
      { text: TM.fmt.bytes(TM.sum(b.sources, "bytes")), num: true, test: "backlog-bytes", title: TM.sum(b.sources, "bytes") + " bytes" },
      backlogRows(b.sources)
    ];
  }

  // backlogRows is the rows a plan would read: known only when every
  // source with something to read counts its rows before reading (a SQL
  // table does; files are counted once read), else unknown, never 0.
  function backlogRows(sources) {
    var known = Object.keys(sources || {}).every(function (k) {
      var s = sources[k];
      return s.rows !== undefined && s.rows !== null || !Number(s.files || 0);
    });
    if (!known) return { text: "—", num: true, test: "backlog-rows", title: "unknown: the row count of files is known only once they are read" };
    return { text: TM.fmt.int(TM.sum(sources, "rows")), num: true, test: "backlog-rows" };
  }

  // successRate is the share of the recent runs that succeeded, of those
  // that ended.
  function successRate(rc) {
    var ended = rc ? rc.succeeded + rc.failed : 0;
    if (!ended) return { text: "", num: true, test: "success-rate" };
    return { text: Math.round(100 * rc.succeeded / ended) + "%", num: true, test: "success-rate",
      title: rc.succeeded + " of the last " + ended + " runs succeeded, " + rc.failed + " failed" };
  }

  // problems is the Last error cell: the last run's error when it failed,
  // and the plan's error, each after a word saying what failed.
  function problems(j) {
    var out = [];
    var r = j.last_run;
    if (r && r.status === "failed" && r.error) out.push(problem("run failed", r.error));
    if (j.backlog_error) {
      var e = j.backlog_error;
      out.push(/^no job file known/.test(e) ? problem("no job file", e.replace(/^no job file known:\s*/, "")) : problem("plan failed", e));
    }
    return out;
  }

  function problem(kind, text) {
    var cut = text.length > 160 ? text.slice(0, 160) + "…" : text;
    return TM.el("div", { "class": "problem", "data-test": "job-problem", "data-kind": kind, title: text },
      TM.el("strong", null, kind + ": "), cut);
  }

  function jobRow(j) {
    var r = j.last_run;
    var cells = [
      { node: TM.link(TM.routes.job(j.job), j.job, { "data-test": "job-link" }) },
      { node: TM.status(r) },
      successRate(j.recent),
      { node: j.last_read_run ? TM.link(TM.routes.run(j.job, j.last_read_run.run_id), TM.fmt.time(j.last_read_run.started_at),
        { "data-test": "last-read-link" }) : "", test: "last-read", title: j.last_read_run ? "run " + j.last_read_run.run_id : null },
      { text: r ? TM.fmt.time(r.started_at) : "", test: "started-at" },
      { text: r ? TM.fmt.duration(r.duration_ms) : "", num: true, test: "duration" },
      { text: r ? TM.fmt.int(TM.sum(r.sources, "rows")) : "", num: true, test: "rows-in" },
      { text: r ? TM.fmt.int(TM.sum(r.sinks, "rows")) : "", num: true, test: "rows-out" },
      { text: r ? TM.fmt.bytes(TM.sum(r.sources, "bytes")) : "", num: true, test: "bytes-in" },
      { text: r ? TM.fmt.bytes(TM.sum(r.sinks, "bytes")) : "", num: true, test: "bytes-out" },
      { text: String(j.version), num: true, test: "version" }
    ].concat(backlogCells(j), [{ node: problems(j), test: "last-error" }]);
    return TM.row({ "data-test": "job-row", "data-job": j.job, "data-status": r ? r.status : "none",
      "data-rows-in": r ? TM.sum(r.sources, "rows") : null, "data-rows-out": r ? TM.sum(r.sinks, "rows") : null,
      "data-bytes-in": r ? TM.sum(r.sources, "bytes") : null, "data-bytes-out": r ? TM.sum(r.sinks, "bytes") : null,
      "data-version": j.version, "data-run": r ? r.run_id : null }, cells);
  }

  // TM.pages.jobs renders the jobs page into main.
  TM.pages = TM.pages || {};
  TM.pages.jobs = function (main) {
    TM.crumbs([]);
    main.appendChild(TM.el("h1", null, "Jobs"));
    var body = TM.el("div", { "data-test": "jobs" }, TM.message("info", "Loading jobs…"));
    main.appendChild(body);
    return TM.api.get("/jobs").then(function (data) {
      TM.clear(body);
      var jobs = (data && data.jobs) || [];
      if (!jobs.length) { body.appendChild(TM.message("info", "No jobs in this state store yet: run one with `tidemark run JOBFILE`.")); return; }
      body.appendChild(TM.table("jobs-table", [
        "Job", "Last run", { text: "Success rate", num: true }, "Last read data", "Started", { text: "Duration", num: true },
        { text: "Rows in", num: true }, { text: "Rows out", num: true },
        { text: "Bytes in", num: true }, { text: "Bytes out", num: true },
        { text: "Bookmark version", num: true },
        { text: "Backlog files", num: true }, { text: "Backlog bytes", num: true }, { text: "Backlog rows", num: true }, "Last error"
      ], jobs.map(jobRow)));
    }, function (err) { TM.showError(body, err); });
  };
})(window.TM);

// jobs.js: the jobs page (#/): every job with its last run, bookmark
// version and backlog, from GET /api/v1/jobs.
"use strict";
(function (TM) {
  // backlogCells sums a plan over its sources: files, bytes, rows.
  function backlogCells(j) {
    if (j.backlog_error) {
      return [{ node: TM.el("span", { "class": "muted", "data-test": "backlog-error", title: j.backlog_error }, "unknown: " + j.backlog_error) }, "", ""];
    }
    var b = j.backlog;
    if (!b) return [{ node: TM.el("span", { "class": "muted", "data-test": "backlog-none" }, "not known") }, "", ""];
    return [
      { text: TM.fmt.int(TM.sum(b.sources, "files")), num: true, test: "backlog-files" },
      { text: TM.fmt.bytes(TM.sum(b.sources, "bytes")), num: true, test: "backlog-bytes", title: TM.sum(b.sources, "bytes") + " bytes" },
      { text: TM.fmt.int(TM.sum(b.sources, "rows")), num: true, test: "backlog-rows" }
    ];
  }

  function jobRow(j) {
    var r = j.last_run;
    var cells = [
      { node: TM.link(TM.routes.job(j.job), j.job, { "data-test": "job-link" }) },
      { node: TM.status(r) },
      { text: r ? TM.fmt.time(r.started_at) : "", test: "started-at" },
      { text: r ? TM.fmt.duration(r.duration_ms) : "", num: true, test: "duration" },
      { text: r ? TM.fmt.int(TM.sum(r.sources, "rows")) : "", num: true, test: "rows-in" },
      { text: r ? TM.fmt.int(TM.sum(r.sinks, "rows")) : "", num: true, test: "rows-out" },
      { text: r ? TM.fmt.bytes(TM.sum(r.sources, "bytes")) : "", num: true, test: "bytes-in" },
      { text: r ? TM.fmt.bytes(TM.sum(r.sinks, "bytes")) : "", num: true, test: "bytes-out" },
      { text: String(j.version), num: true, test: "version" }
    ].concat(backlogCells(j));
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
        "Job", "Last run", "Started", { text: "Duration", num: true },
        { text: "Rows in", num: true }, { text: "Rows out", num: true },
        { text: "Bytes in", num: true }, { text: "Bytes out", num: true },
        { text: "Bookmark version", num: true },
        { text: "Backlog files", num: true }, { text: "Backlog bytes", num: true }, { text: "Backlog rows", num: true }
      ], jobs.map(jobRow)));
    }, function (err) { TM.showError(body, err); });
  };
})(window.TM);

// actions.js: plan now, reset and rewind (with or without purge), shown
// only when GET /api/v1/session says actions are on. A reset or rewind is
// confirmed in a dialog that lists what the dry run says would be undone
// and deleted; the confirmation sends the same request without dry_run.
"use strict";
(function (TM) {
  function list(test, title, items, empty) {
    var box = TM.el("div", { "data-test": test, "data-count": items.length });
    box.appendChild(TM.el("h3", null, title + " (" + items.length + ")"));
    if (!items.length) { box.appendChild(TM.el("p", { "class": "muted" }, empty)); return box; }
    box.appendChild(TM.el("ul", null, items.map(function (x) { return TM.el("li", { "data-test": test + "-item" }, String(x)); })));
    return box;
  }

  function planView(p) {
    var keys = TM.sortedKeys(p.sources);
    return TM.el("div", { "data-test": "plan-result", "data-version": p.version },
      TM.el("p", null, "Mode " + p.mode + ", bookmark version " + p.version + ": the next run would read"),
      TM.table("plan-table", ["Source", { text: "Files", num: true }, { text: "Bytes", num: true }, { text: "Rows", num: true }, "Notes"],
        keys.map(function (k) {
          var s = p.sources[k], notes = [];
          if (s.modified) notes.push(s.modified + " modified");
          if (s.unchanged) notes.push(s.unchanged + " unchanged");
          if (s.deferred) notes.push(s.deferred + " left for later runs");
          if (s.regressions) notes.push(s.regressions + " regressions");
          if (s.root_missing) notes.push("the folder does not exist yet");
          (s.warnings || []).forEach(function (w) { notes.push(w); });
          return TM.row({ "data-test": "plan-row", "data-ctx": k, "data-files": s.files, "data-bytes": s.bytes, "data-rows": s.rows || 0 }, [
            k, { text: TM.fmt.int(s.files), num: true }, { text: TM.fmt.bytes(s.bytes), num: true }, { text: TM.fmt.int(s.rows || 0), num: true }, notes.join("; ")]);
        })));
  }

  // panel is the job page's action bar.
  function panel(job) {
    var out = TM.el("div", { "data-test": "action-result" });
    var plan = TM.el("button", { type: "button", "data-test": "plan-now" }, "Plan now");
    plan.addEventListener("click", function () {
      plan.disabled = true;
      TM.clear(out).appendChild(TM.message("info", "Planning…"));
      TM.api.get(TM.api.job(job) + "/plan").then(function (p) { TM.clear(out).appendChild(planView(p)); },
        function (err) { TM.showError(out, err); }).then(function () { plan.disabled = false; });
    });
    var reset = TM.el("button", { type: "button", "data-test": "reset" }, "Reset bookmark…");
    reset.addEventListener("click", function () { open(job, ""); });
    return TM.el("section", { "data-test": "actions" }, TM.el("h2", null, "Actions"), TM.el("div", { "class": "actions" }, plan, reset), out);
  }

  var state = { job: "", toRun: "", seq: 0 };

  function body() { return document.getElementById("confirm-body"); }
  function ok() { return document.getElementById("confirm-ok"); }
  function purge() { return document.getElementById("confirm-purge"); }

  function request(dry) { return { to_run: state.toRun, purge: purge().checked, dry_run: dry }; }

  // dryRun asks what the reset would do and shows it; ok is enabled only
  // once the answer for the current settings is shown.
  function dryRun() {
    var seq = ++state.seq;
    ok().disabled = true;
    TM.clear(body()).appendChild(TM.message("info", "Asking what this would undo…"));
    if (!TM.api.token()) { TM.clear(body()).appendChild(TM.message("error", "Type the token in the field at the top of the page first.")); return; }
    TM.api.post(TM.api.job(state.job) + "/reset", request(true)).then(function (d) {
      if (seq !== state.seq) return;
      var b = TM.clear(body());
      b.setAttribute("data-purge", purge().checked ? "true" : "false");
      b.appendChild(list("dry-undo", "Runs that would be undone", d.undo || [], "No run would be undone."));
      b.appendChild(list("dry-delete", "Files that would be deleted", d["delete"] || [], purge().checked ? "Nothing would be deleted." : "Nothing is deleted without purge."));
      ok().disabled = false;
    }, function (err) { if (seq === state.seq) TM.showError(body(), err); });
  }

  function open(job, toRun) {
    state.job = job; state.toRun = toRun;
    document.getElementById("confirm-title").textContent = toRun ? "Rewind " + job + " to run " + toRun : "Reset the bookmark of " + job;
    purge().checked = false;
    document.getElementById("confirm").showModal();
    dryRun();
  }

  function confirm() {
    ok().disabled = true;
    var seq = ++state.seq;
    TM.api.post(TM.api.job(state.job) + "/reset", request(false)).then(function (res) {
      if (seq !== state.seq) return;
      var b = TM.clear(body());
      b.appendChild(TM.el("div", { "data-test": "reset-done", "data-version": res.version },
        TM.message("info", "Done: bookmark version " + res.version + ", " + (res.undone || []).length + " runs undone, " + (res.deleted || []).length + " files deleted."),
        list("done-deleted", "Deleted", res.deleted || [], "Nothing deleted."),
        (res.gone && res.gone.length) ? list("done-gone", "Already gone", res.gone, "") : null));
      document.getElementById("confirm-cancel").textContent = "Close";
      state.done = true;
    }, function (err) { if (seq === state.seq) TM.showError(body(), err); });
  }

  function init() {
    purge().addEventListener("change", dryRun);
    ok().addEventListener("click", confirm);
    document.getElementById("confirm-cancel").addEventListener("click", function () { document.getElementById("confirm").close(); });
    document.getElementById("confirm").addEventListener("close", function () {
      state.seq++;
      document.getElementById("confirm-cancel").textContent = "Cancel";
      if (state.done) { state.done = false; TM.render(); }
    });
  }

  TM.actions = { panel: panel, reset: open, init: init };
})(window.TM);

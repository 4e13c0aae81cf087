// app.js: the hash router (#/, #/jobs/NAME, #/jobs/NAME/runs/RUN), the
// breadcrumbs and the token field.
"use strict";
(function (TM) {
  // parse splits a hash route into its page and decoded segments.
  function parse(hash) {
    var p = (hash || "").replace(/^#/, "").split("/").filter(function (s) { return s !== ""; });
    try { p = p.map(decodeURIComponent); } catch (e) { return { page: "bad" }; }
    if (!p.length) return { page: "jobs" };
    if (p[0] === "jobs" && p.length === 2) return { page: "job", job: p[1] };
    if (p[0] === "jobs" && p.length === 4 && p[2] === "runs") return { page: "run", job: p[1], run: p[3] };
    return { page: "bad" };
  }

  TM.crumbs = function (items) {
    var nav = TM.clear(document.getElementById("crumbs"));
    TM.append(nav, TM.link("/", "Jobs", { "data-test": "crumb-jobs" }));
    items.forEach(function (it) { TM.append(nav, [TM.el("span", { "class": "muted" }, "›"), TM.link(it[0], it[1])]); });
  };

  // render draws the page the hash names.
  TM.render = function () {
    var main = TM.clear(document.getElementById("app"));
    var r = parse(location.hash);
    main.setAttribute("data-page", r.page);
    var done;
    if (r.page === "jobs") done = TM.pages.jobs(main);
    else if (r.page === "job") done = TM.pages.job(main, r.job);
    else if (r.page === "run") done = TM.pages.run(main, r.job, r.run);
    else { TM.crumbs([]); main.appendChild(TM.message("error", "There is no such page: " + location.hash, 404)); done = Promise.resolve(); }
    Promise.resolve(done).then(function () { main.setAttribute("data-loaded", "true"); });
  };

  function tokenState() {
    document.getElementById("token-state").textContent = TM.api.token() ? "token set for this tab" : "no token: read-only";
  }

  function initToken(session) {
    var form = document.getElementById("token-form");
    form.hidden = !(session && session.actions);
    tokenState();
    form.addEventListener("submit", function (e) {
      e.preventDefault();
      var input = document.getElementById("token-input");
      TM.api.setToken(input.value.trim());
      input.value = "";
      tokenState();
      if (session.reads_need_token) TM.render(); // the page could not be read without it
    });
    document.getElementById("token-clear").addEventListener("click", function () { TM.api.setToken(""); tokenState(); });
  }

  TM.parseRoute = parse;
  window.addEventListener("hashchange", TM.render);
  document.addEventListener("DOMContentLoaded", function () {
    TM.actions.init();
    TM.api.session().then(function (s) {
      document.body.setAttribute("data-actions", s && s.actions ? "true" : "false");
      initToken(s);
    });
    TM.render();
  });
})(window.TM);

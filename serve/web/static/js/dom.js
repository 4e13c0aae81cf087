// dom.js: building DOM from data. Every text goes in through textContent
// (text nodes), never through HTML parsing, so names, paths and error
// messages holding markup are shown as they are.
"use strict";
var TM = window.TM || {};
window.TM = TM;

// el makes an element: attrs sets attributes (class, id, href, data-*...),
// children are nodes or strings (made text nodes); null/undefined are left out.
TM.el = function (tag, attrs) {
  var e = document.createElement(tag);
  if (attrs) {
    Object.keys(attrs).forEach(function (k) {
      var v = attrs[k];
      if (v === null || v === undefined || v === false) return;
      if (k === "text") e.textContent = String(v);
      else if (k === "onclick") e.addEventListener("click", v);
      else e.setAttribute(k, v === true ? "" : String(v));
    });
  }
  for (var i = 2; i < arguments.length; i++) TM.append(e, arguments[i]);
  return e;
};

// append adds a node, a string (as text) or an array of those to parent.
TM.append = function (parent, c) {
  if (c === null || c === undefined) return;
  if (Array.isArray(c)) { c.forEach(function (x) { TM.append(parent, x); }); return; }
  if (typeof c === "string" || typeof c === "number") c = document.createTextNode(String(c));
  parent.appendChild(c);
};

// clear removes every child of e.
TM.clear = function (e) { while (e.firstChild) e.removeChild(e.firstChild); return e; };

// link is an <a> to a hash route.
TM.link = function (route, text, attrs) {
  var a = TM.el("a", attrs, text);
  a.setAttribute("href", "#" + route);
  return a;
};

// routes builds hash routes with every segment escaped.
TM.routes = {
  jobs: function () { return "/"; },
  job: function (job) { return "/jobs/" + encodeURIComponent(job); },
  run: function (job, run) { return "/jobs/" + encodeURIComponent(job) + "/runs/" + encodeURIComponent(run); }
};

// fmt holds the number, size, time and duration formats.
TM.fmt = {
  int: function (n) { return n === null || n === undefined ? "" : Number(n).toLocaleString("en-US"); },
  bytes: function (n) {
    if (n === null || n === undefined) return "";
    var u = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"], i = 0, v = Number(n);
    while (Math.abs(v) >= 1024 && i < u.length - 1) { v /= 1024; i++; }
    return (i === 0 ? String(v) : v.toFixed(1)) + " " + u[i];
  },
  duration: function (ms) {
    if (ms === null || ms === undefined) return "";
    if (ms < 1000) return ms + " ms";
    var s = ms / 1000;
    if (s < 60) return s.toFixed(s < 10 ? 2 : 1) + " s";
    var m = Math.floor(s / 60), rs = Math.round(s - m * 60);
    if (m < 60) return m + " min " + rs + " s";
    return Math.floor(m / 60) + " h " + (m % 60) + " min";
  },
  time: function (iso) {
    if (!iso) return "";
    var d = new Date(iso);
    if (isNaN(d.getTime())) return String(iso);
    return d.toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z").replace(/Z$/, " UTC");
  },
  nanos: function (ns) {
    if (!ns) return "";
    return TM.fmt.time(new Date(Number(ns) / 1e6).toISOString());
  }
};

// sum adds field f over the values of a map of counts (a Result's sources or sinks).
TM.sum = function (counts, f) {
  var t = 0;
  if (!counts) return 0;
  Object.keys(counts).forEach(function (k) { t += Number(counts[k][f] || 0); });
  return t;
};

// sortedKeys returns the keys of o in order.
TM.sortedKeys = function (o) { return o ? Object.keys(o).sort() : []; };

// status is a run status as a span classed for its colour.
TM.status = function (r) {
  if (!r) return TM.el("span", { "class": "muted", "data-test": "status", "data-status": "none" }, "no runs");
  var s = TM.el("span", { "class": "status-" + r.status + (r.undone ? " undone" : ""), "data-test": "status", "data-status": r.status }, r.status);
  if (r.undone) TM.append(s, " (undone" + (r.purged ? ", purged" : "") + ")");
  return s;
};

// table makes a table from header cells and rows (arrays of cells);
// a header cell or a cell may be {text, num, test} or a node or a string.
TM.cell = function (tag, c) {
  if (c && typeof c === "object" && !(c instanceof Node) && !Array.isArray(c)) {
    return TM.el(tag, { "class": c.num ? "num" : null, "data-test": c.test || null, title: c.title || null }, c.node || (c.text === undefined ? "" : String(c.text)));
  }
  return TM.el(tag, null, c);
};
TM.table = function (test, head, rows) {
  var thead = TM.el("thead", null, TM.el("tr", null, head.map(function (h) { return TM.cell("th", h); })));
  var tbody = TM.el("tbody");
  rows.forEach(function (r) { tbody.appendChild(r instanceof Node ? r : TM.el("tr", null, r.map(function (c) { return TM.cell("td", c); }))); });
  return TM.el("table", { "data-test": test }, thead, tbody);
};

// row makes a <tr> with attributes and cells.
TM.row = function (attrs, cells) {
  return TM.el("tr", attrs, cells.map(function (c) { return TM.cell("td", c); }));
};

// kv makes a definition list from [label, value] pairs.
TM.kv = function (test, pairs) {
  var dl = TM.el("dl", { "class": "kv", "data-test": test });
  pairs.forEach(function (p) {
    if (!p) return;
    dl.appendChild(TM.el("dt", null, p[0]));
    dl.appendChild(TM.el("dd", { "data-test": p[2] || null }, p[1]));
  });
  return dl;
};

// unknown is a value not known (never shown as 0): a dash whose title
// says why.
TM.unknown = function (why, test) {
  return TM.el("span", { "class": "muted unknown", "data-test": test || null, title: why }, "—");
};

// message is a notice box; kind "error" makes it red.
TM.message = function (kind, text, status) {
  return TM.el("div", { "class": "message " + kind, "data-test": kind === "error" ? "error" : "message", "data-status": status || null, role: kind === "error" ? "alert" : null }, text);
};

// charts.js: a job's runs over time (rows, bytes, duration) drawn with the
// vendored uPlot; failed runs are red points, undone runs (reset or rewound
// away) grey points, and resets and rewinds dashed vertical lines (orange:
// a rewind, red: a reset clearing the bookmark).
"use strict";
(function (TM) {
  function when(r) { return new Date(r.started_at || r.finished_at || 0).getTime() / 1000; }

  // series turns runs (any order) into uPlot columns: time, then one column
  // per value function, then the failed and undone markers of the first.
  function columns(runs, values) {
    var rs = runs.slice().sort(function (a, b) { return when(a) - when(b) || (a.seq || 0) - (b.seq || 0); });
    var cols = [rs.map(when)];
    values.forEach(function (f) { cols.push(rs.map(f)); });
    var first = values[0];
    cols.push(rs.map(function (r) { return r.status === "failed" ? first(r) : null; }));
    cols.push(rs.map(function (r) { return r.undone ? first(r) : null; }));
    return cols;
  }

  function marker(label, color) {
    return { label: label, stroke: color, width: 0, paths: function () { return null; },
      points: { show: true, size: 9, stroke: color, fill: color } };
  }

  var markColor = { rewind: "#bc4c00", reset: "#cf222e" };

  // markHook draws marks (bookmark versions of kind reset or rewind) as
  // dashed vertical lines across the plot.
  function markHook(marks) {
    return function (u) {
      var ctx = u.ctx, top = u.bbox.top, h = u.bbox.height;
      ctx.save();
      ctx.setLineDash([5, 4]);
      ctx.lineWidth = 2;
      marks.forEach(function (m) {
        var x = u.valToPos(new Date(m.at).getTime() / 1000, "x", true);
        if (!isFinite(x) || x < u.bbox.left || x > u.bbox.left + u.bbox.width) return;
        ctx.strokeStyle = markColor[m.kind] || "#bc4c00";
        ctx.beginPath(); ctx.moveTo(x, top); ctx.lineTo(x, top + h); ctx.stroke();
      });
      ctx.restore();
    };
  }

  function chart(into, test, title, runs, lines, fmt, marks) {
    var box = TM.el("div", { "class": "chart", "data-test": test, "data-points": runs.length, "data-marks": marks.length });
    into.appendChild(box);
    if (typeof uPlot === "undefined") { box.appendChild(TM.message("error", "The chart library did not load.")); return; }
    var series = [{}];
    lines.forEach(function (l) {
      series.push({ label: l.label, stroke: l.color, width: 2, points: { show: true, size: 5 },
        value: function (u, v) { return v === null || v === undefined ? "" : fmt(v); } });
    });
    series.push(marker("failed", "#cf222e"));
    series.push(marker("undone", "#8c959f"));
    var opts = {
      title: title, width: 420, height: 220, series: series,
      axes: [{}, { size: 70, values: function (u, vals) { return vals.map(fmt); } }],
      // The time axis reaches the newest mark after the first run drawn
      // (a rewind after the last run is shown at the right edge).
      scales: { x: { time: true, range: function (u, lo, hi) {
        marks.forEach(function (m) { var t = new Date(m.at).getTime() / 1000; if (t >= lo && t > hi) hi = t; });
        return lo === hi ? [lo - 1, hi + 1] : [lo, hi];
      } } },
      hooks: { draw: [markHook(marks)] }
    };
    if (marks.length) {
      box.appendChild(TM.el("div", { "class": "chart-marks muted", "data-test": "chart-marks" },
        "dashed lines: " + marks.length + (marks.length === 1 ? " reset or rewind" : " resets and rewinds")));
    }
    try {
      new uPlot(opts, columns(runs, lines.map(function (l) { return l.value; })), box);
    } catch (e) {
      box.appendChild(TM.message("error", "The chart could not be drawn: " + String(e && e.message || e)));
    }
  }

  // TM.charts draws the three charts of runs into an element, with marks
  // (bookmark versions of kind reset or rewind: {at, kind}) as lines.
  TM.charts = function (into, runs, marks) {
    marks = marks || [];
    TM.clear(into);
    if (!runs.length) { into.appendChild(TM.message("info", "No runs to chart yet.")); return; }
    chart(into, "chart-rows", "Rows per run", runs, [
      { label: "rows in", color: "#0969da", value: function (r) { return TM.sum(r.sources, "rows"); } },
      { label: "rows out", color: "#1a7f37", value: function (r) { return TM.sum(r.sinks, "rows"); } }
    ], TM.fmt.int, marks);
    chart(into, "chart-bytes", "Bytes per run", runs, [
      { label: "bytes in", color: "#0969da", value: function (r) { return TM.sum(r.sources, "bytes"); } },
      { label: "bytes out", color: "#1a7f37", value: function (r) { return TM.sum(r.sinks, "bytes"); } }
    ], TM.fmt.bytes, marks);
    chart(into, "chart-duration", "Duration per run", runs, [
      { label: "duration", color: "#8250df", value: function (r) { return r.duration_ms || 0; } }
    ], TM.fmt.duration, marks);
  };
})(window.TM);

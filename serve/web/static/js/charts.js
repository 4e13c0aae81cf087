// charts.js: a job's runs (rows, bytes, duration) drawn with the vendored
// uPlot as bars per run on an axis of runs (oldest left, labeled by the
// run's #), so runs that bunch in time stay apart; in and out are solid and
// hatched bars with a legend; failed runs are red points, undone runs
// (reset or rewound away) grey points, and resets and rewinds dashed
// vertical lines between the runs they came between (orange: a rewind,
// red: a reset clearing the bookmark). The y axis is in units that fit
// its numbers (durations in ms, s, min or h).
"use strict";
(function (TM) {
  function when(r) { return new Date(r.started_at || r.finished_at || 0).getTime() / 1000; }

  function order(runs) {
    return runs.slice().sort(function (a, b) { return (a.seq || 0) - (b.seq || 0) || when(a) - when(b); });
  }

  // columns turns runs (in order) into uPlot columns: the run's index,
  // then one column per value function, then the failed and undone markers
  // at the first value.
  function columns(rs, values) {
    var cols = [rs.map(function (r, i) { return i; })];
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

  // hatch is a fill of diagonal lines in color, for the second series of
  // a chart, so that in and out differ in more than colour.
  function hatch(color) {
    var c = document.createElement("canvas");
    c.width = c.height = 8;
    var g = c.getContext("2d");
    g.fillStyle = "#ffffff";
    g.fillRect(0, 0, 8, 8);
    g.strokeStyle = color;
    g.lineWidth = 2;
    g.beginPath(); g.moveTo(0, 8); g.lineTo(8, 0); g.moveTo(-2, 2); g.lineTo(2, -2); g.moveTo(6, 10); g.lineTo(10, 6); g.stroke();
    return g.createPattern(c, "repeat");
  }

  var markColor = { rewind: "#bc4c00", reset: "#cf222e" };

  // markX places a mark between the last run started at or before it and
  // the next.
  function markX(rs, m) {
    var t = new Date(m.at).getTime() / 1000, k = 0;
    rs.forEach(function (r) { if (when(r) <= t) k++; });
    return k - 0.5;
  }

  // markHook draws marks (bookmark versions of kind reset or rewind) as
  // dashed vertical lines across the plot.
  function markHook(rs, marks) {
    return function (u) {
      var ctx = u.ctx, top = u.bbox.top, h = u.bbox.height;
      ctx.save();
      ctx.setLineDash([5, 4]);
      ctx.lineWidth = 2;
      marks.forEach(function (m) {
        var x = u.valToPos(markX(rs, m), "x", true);
        if (!isFinite(x)) return;
        ctx.strokeStyle = markColor[m.kind] || "#bc4c00";
        ctx.beginPath(); ctx.moveTo(x, top); ctx.lineTo(x, top + h); ctx.stroke();
      });
      ctx.restore();
    };
  }

  // durationUnit is the unit a duration axis whose largest value is max
  // (ms) is drawn in.
  function durationUnit(max) {
    if (max >= 2 * 3600000) return { name: "h", ms: 3600000 };
    if (max >= 60000) return { name: "min", ms: 60000 };
    if (max >= 1000) return { name: "s", ms: 1000 };
    return { name: "ms", ms: 1 };
  }

  // compact writes a count short enough for the axis (1.5k, 2M).
  function compact(n) {
    var a = Math.abs(n);
    if (a >= 1e9) return trim(n / 1e9) + "G";
    if (a >= 1e6) return trim(n / 1e6) + "M";
    if (a >= 1e4) return trim(n / 1e3) + "k";
    return TM.fmt.int(n);
  }

  function trim(v) { return String(Math.round(v * 100) / 100); }

  // xSplits are the run indexes labeled on the x axis: every run, or every
  // step-th when there are many.
  function xSplits(n) {
    var step = 1;
    [1, 2, 5, 10, 20, 50, 100, 200, 500].some(function (s) { step = s; return n / s <= 10; });
    var out = [];
    for (var i = 0; i < n; i += step) out.push(i);
    return out;
  }

  // chart draws one chart: lines are {label, color, value} per series (at
  // most two: solid, then hatched bars); axis formats the y ticks and
  // legend the values.
  function chart(into, test, title, runs, lines, axis, legend, marks, unit) {
    var rs = order(runs);
    var styles = ["solid bars", "hatched bars"];
    var box = TM.el("div", { "class": "chart", "data-test": test, "data-points": runs.length, "data-marks": marks.length,
      "data-x": "run", "data-unit": unit || null,
      "data-series": lines.map(function (l, i) { return l.label + ": " + styles[i]; }).join("|") });
    into.appendChild(box);
    if (typeof uPlot === "undefined") { box.appendChild(TM.message("error", "The chart library did not load.")); return; }
    var series = [{ label: "run", value: function (u, i) { return i === null || !rs[Math.round(i)] ? "" : "#" + rs[Math.round(i)].seq; } }];
    var bars = uPlot.paths && uPlot.paths.bars;
    lines.forEach(function (l, i) {
      var two = lines.length > 1;
      series.push({ label: l.label, stroke: l.color, width: 1,
        fill: i === 0 ? l.color : function () { return hatch(l.color); },
        paths: bars ? bars({ size: [two ? 0.4 : 0.6, 60], align: two ? (i === 0 ? -1 : 1) : 0 }) : undefined,
        points: { show: false },
        value: function (u, v) { return v === null || v === undefined ? "" : legend(v); } });
    });
    series.push(marker("failed", "#cf222e"));
    series.push(marker("undone", "#8c959f"));
    var opts = {
      title: title, width: 420, height: 220, series: series,
      axes: [
        { splits: function () { return xSplits(rs.length); },
          values: function (u, vals) {
            var t = vals.map(function (i) { return rs[i] ? "#" + (rs[i].seq === undefined ? i + 1 : rs[i].seq) : ""; });
            box.setAttribute("data-x-ticks", t.join("|"));
            return t;
          } },
        { size: 70, values: function (u, vals) {
            var t = vals.map(axis);
            box.setAttribute("data-y-ticks", t.join("|"));
            return t;
          } }
      ],
      scales: { x: { time: false, range: function () { return [-0.5, rs.length - 0.5]; } },
        y: { range: function (u, lo, hi) { return [0, hi > 0 ? hi * 1.05 : 1]; } } },
      hooks: { draw: [markHook(rs, marks)] }
    };
    if (marks.length) {
      box.appendChild(TM.el("div", { "class": "chart-marks muted", "data-test": "chart-marks" },
        "dashed lines: " + marks.length + (marks.length === 1 ? " reset or rewind" : " resets and rewinds")));
    }
    try {
      new uPlot(opts, columns(rs, lines.map(function (l) { return l.value; })), box);
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
    ], compact, TM.fmt.int, marks);
    chart(into, "chart-bytes", "Bytes per run", runs, [
      { label: "bytes in", color: "#0969da", value: function (r) { return TM.sum(r.sources, "bytes"); } },
      { label: "bytes out", color: "#1a7f37", value: function (r) { return TM.sum(r.sinks, "bytes"); } }
    ], TM.fmt.bytes, TM.fmt.bytes, marks);
    var max = 0;
    runs.forEach(function (r) { max = Math.max(max, r.duration_ms || 0); });
    var u = durationUnit(max);
    chart(into, "chart-duration", "Duration per run (" + u.name + ")", runs, [
      { label: "duration", color: "#8250df", value: function (r) { return (r.duration_ms || 0) / u.ms; } }
    ], function (v) { return trim(v) + " " + u.name; }, function (v) { return TM.fmt.duration(Math.round(v * u.ms)); }, marks, u.name);
  };
})(window.TM);

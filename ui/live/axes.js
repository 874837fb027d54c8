// Axes that move while a control moves, without Plotly. Plotly's relayout measures every new tick label in the
// page's layout (getBoundingClientRect), and while a slider is dragged the page's layout is always dirty, so one
// relayout costs tens of milliseconds. Here a moving axis keeps its pixels: Plotly's own tick labels and grid
// lines are hidden, labels and lines for the new range are drawn by this code in their place, and the data drawn
// straight into the SVG (engine.js) uses the mapping below. When the controls rest, the engine hands the axis
// back to Plotly (its exact relayout) and these drawings go.
//
// Ticks follow Plotly's automatic rule (plotly.js axes.autoTicks, autoTickRound, numFormat): about one label per
// 80 px across and 40 px up, the step rounded up to 2, 5 or 10 times a power of ten, two digits past the step's
// largest, k / M / B past 10^3, and the minus sign U+2212, so that the hand-over at rest moves nothing visible.

const fastAxes = (() => {
  const NS = "http://www.w3.org/2000/svg";
  const SI = { 3: "k", 6: "M", 9: "B", 12: "T", "-3": "m", "-6": "μ", "-9": "n" };
  const log10 = (v) => Math.log(v) / Math.LN10;
  const roundUp = (value) => [2, 5, 10].find((r) => r >= value - 1e-9) || 10;
  const niceStep = (rough) => {
    const base = 10 ** Math.floor(log10(rough));
    return base * roundUp(rough / base);
  };
  const targetCount = (axis) => {
    const across = axis._id.charAt(0) === "x";
    return Math.min(9, Math.max(4, axis._length / (across ? 80 : 40))) + 1;
  };
  // Python-free copy of plotly's numFormat for linear ticks with exponentformat "B" (the default)
  const format = (value, step, range) => {
    let round = 2 - Math.floor(log10(step) + 0.01);
    const largest = Math.max(Math.abs(range[0]), Math.abs(range[1]));
    const rangeExponent = Math.floor(log10(largest) + 0.01);
    const exponent = Math.abs(rangeExponent) > 3 ? 3 * Math.round((rangeExponent - 1) / 3) : 0;
    let v = value;
    if (exponent) {
      v *= 10 ** -exponent;
      round += exponent;
    }
    let text = Math.abs(v) < 0.5 * 10 ** -Math.max(0, round) ? "0" : v.toFixed(Math.max(0, Math.min(20, round)));
    if (text.includes(".")) text = text.replace(/0+$/, "").replace(/\.$/, "");
    if (text === "-0") text = "0";
    return text.replace("-", "\u2212") + (exponent && text !== "0" ? SI[exponent] || `e${exponent}` : "");
  };
  const linearTicks = (axis, range) => {
    const [low, high] = [Math.min(...range), Math.max(...range)];
    const step = axis.tickmode === "linear" && Number(axis.dtick) > 0 ? Number(axis.dtick) : niceStep((high - low) / targetCount(axis));
    const ticks = [];
    for (let v = Math.ceil(low / step - 1e-9) * step; v <= high + step * 1e-9 && ticks.length < 60; v += step) {
      const value = Math.abs(v) < step * 1e-9 ? 0 : v;
      ticks.push({ at: value, text: format(value, step, range) });
    }
    return ticks;
  };
  // a log axis's range is in decades: a label at every power of ten the step allows
  const decadeText = (k) => (k >= 4 || k <= -1 ? format(10 ** k, 10 ** k, [10 ** k, 10 ** k]) : String(10 ** k));
  // plotly's rule: past 0.7 decades a label a rough step, every whole number of decades; else the powers of ten
  // with 2 and 5 between them ("D2") or every digit ("D1"), the digits labelled alone
  const logTicks = (axis, range) => {
    const [low, high] = [Math.min(...range), Math.max(...range)];
    const rough = (high - low) / targetCount(axis);
    const ticks = [];
    if (rough > 0.7 || high - low < 1) {
      const step = Math.max(1, Math.ceil(rough));
      for (let k = Math.ceil(low / step) * step; k <= high + 1e-9 && ticks.length < 60; k += step) ticks.push({ at: k, text: decadeText(k) });
      return ticks;
    }
    const digits = rough > 0.3 ? [1, 2, 5] : [1, 2, 3, 4, 5, 6, 7, 8, 9];
    for (let k = Math.floor(low); k <= Math.ceil(high) && ticks.length < 120; k += 1) {
      for (const digit of digits) {
        const at = k + log10(digit);
        if (at >= low - 1e-9 && at <= high + 1e-9) ticks.push({ at, text: digit === 1 ? decadeText(k) : String(digit) });
      }
    }
    return ticks;
  };
  // a category axis: its labels (Plotly's HTML subset unescaped), every one that fits
  const plainText = (html) =>
    String(html).replace(/<[^>]*>/g, "").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, "&");
  const categoryTicks = (axis, labels) => {
    const across = axis._id.charAt(0) === "x";
    const every = Math.max(1, Math.ceil((labels.length * (across ? 30 : 15)) / Math.max(1, axis._length)));
    return labels.map((text, i) => ({ at: i, text: plainText(text) })).filter((_, i) => i % every === 0);
  };
  const ticksFor = (axis, range, labels) =>
    labels ? categoryTicks(axis, labels) : axis.type === "log" ? logTicks(axis, range) : linearTicks(axis, range);

  // Pixel within the subplot of a value on `axis` drawn over `range` (the range in the axis's own units: decades on
  // a log axis), as Plotly's c2p would give once the axis has that range.
  const mapper = (axis, range) => {
    const across = axis._id.charAt(0) === "x";
    const toUnits = axis.type === "log" ? (v) => (v > 0 ? log10(v) : NaN) : (v) => v; // a category: its index
    const span = range[1] - range[0];
    return across
      ? (v) => ((toUnits(v) - range[0]) / span) * axis._length
      : (v) => ((range[1] - toUnits(v)) / span) * axis._length;
  };

  const moving = new Map(); // figure's div -> {svg, axes: Map(axis name -> range), grid}
  const setHidden = (gd, id, hidden) => {
    for (const element of gd.querySelectorAll(`g.${id}tick, path.${id}grid, path.${id}zl`)) {
      element.style.visibility = hidden ? "hidden" : "";
    }
  };
  const element = (tag, attributes) => {
    const node = document.createElementNS(NS, tag);
    for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
    return node;
  };
  // Draw `axis` over `range`: its labels in an overlay, its grid lines (when `grid`) in Plotly's grid layer
  const draw = (gd, entry, name, range, grid, labels) => {
    const axis = gd._fullLayout[name];
    const id = axis._id;
    const across = id.charAt(0) === "x";
    const sample = gd.querySelector(`g.${id}tick text`);
    const line = gd.querySelector(`path.${id}grid`);
    setHidden(gd, id, true);
    entry.svg.querySelectorAll(`[data-axis="${id}"]`).forEach((node) => node.remove());
    const toPixel = mapper(axis, range);
    const position = (at) => toPixel(axis.type === "log" && !labels ? 10 ** at : at);
    const turn = sample ? (sample.getAttribute("transform") || "").match(/rotate\([^)]*\)/) : null;
    for (const { at, text } of ticksFor(axis, range, labels)) {
      const pixel = position(at);
      if (!(pixel >= -0.5 && pixel <= axis._length + 0.5)) continue;
      if (sample) {
        const label = element("text", {
          "data-axis": id, "text-anchor": sample.getAttribute("text-anchor") || (across ? "middle" : "end"),
          x: sample.getAttribute("x") || 0, y: sample.getAttribute("y") || 0, style: sample.getAttribute("style") || "",
          transform: (across ? `translate(${axis._offset + pixel},0)` : `translate(0,${axis._offset + pixel})`) + (turn ? ` ${turn[0]}` : ""),
        });
        label.textContent = text;
        entry.svg.appendChild(label);
      }
      if (grid && line) {
        entry.grid.appendChild(element("path", {
          "data-axis": id, d: line.getAttribute("d"), style: line.getAttribute("style") || "",
          transform: across ? `translate(${axis._offset + pixel},0)` : `translate(0,${axis._offset + pixel})`,
        }));
      }
    }
  };
  const entryFor = (gd) => {
    let entry = moving.get(gd);
    if (entry && entry.svg.isConnected) return entry;
    const holder = gd.querySelector(".svg-container");
    const full = gd._fullLayout;
    const svg = element("svg", { class: "pe-live-axes", width: full.width, height: full.height });
    svg.style.cssText = "position:absolute;left:0;top:0;pointer-events:none;overflow:visible;";
    holder.appendChild(svg);
    const grid = element("g", { class: "pe-live-grid" });
    const layer = gd.querySelector("g.gridlayer");
    if (layer) layer.appendChild(grid);
    entry = { svg, grid, axes: new Map(), drawn: new Map(), explicit: new Set() };
    moving.set(gd, entry);
    return entry;
  };

  return {
    ticksFor,
    format,
    mapper,
    // The range `name` shows now: the moving one, else Plotly's.
    range: (gd, name) => {
      const entry = moving.get(gd);
      return entry && entry.axes.has(name) ? entry.axes.get(name) : gd._fullLayout[name].range.map(Number);
    },
    // Show `ranges` ({axis name: [from, to]}) on the figure's axes without Plotly; `grid`: draw grid lines too
    // (not under a heatmap, which covers them).
    // `explicit`: the figure sets these ranges itself (no autorange), so they stay when Plotly takes over.
    // `labels` ({axis name: [labels]}): a category axis's labels, one per whole number of its range.
    move: (gd, ranges, grid = true, explicit = false, labels = {}) => {
      const entry = entryFor(gd);
      for (const [name, range] of Object.entries(ranges)) {
        if (explicit) entry.explicit.add(name);
        const key = JSON.stringify([range, labels[name] || null]);
        if (entry.drawn.get(name) === key) continue;
        entry.axes.set(name, range);
        entry.drawn.set(name, key);
        entry.grid.querySelectorAll(`[data-axis="${gd._fullLayout[name]._id}"]`).forEach((node) => node.remove());
        draw(gd, entry, name, range, grid, labels[name]);
      }
    },
    moved: (gd) => moving.has(gd),
    // Give every moved axis back to Plotly: the layout update (autorange) that restores it, to be applied by the
    // caller together with the figure's exact data, in one Plotly call.
    release: (gd) => {
      const entry = moving.get(gd);
      if (!entry) return {};
      moving.delete(gd);
      entry.svg.remove();
      entry.grid.remove();
      const layout = {};
      for (const name of entry.axes.keys()) {
        const axis = gd._fullLayout[name];
        setHidden(gd, axis._id, false);
        const own = (gd.layout || {})[name] || {};
        if (entry.explicit.has(name)) layout[`${name}.range`] = entry.axes.get(name);
        else if (own.range && own.autorange !== true) layout[`${name}.range`] = own.range;
        else layout[`${name}.autorange`] = own.autorange === undefined ? true : own.autorange;
      }
      return layout;
    },
    figures: () => [...moving.keys()],
  };
})();

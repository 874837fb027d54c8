// The live engine: watches the page's own Streamlit widgets and redraws the page's Plotly figures in the browser
// while a control moves. Streamlit still owns every widget (its URL binding, Back and links keep working): a
// slider sends its value to the server on release, and the server's rerun then draws the same figure again. The
// engine only closes the gap in between, from the DOM the widgets already keep current during a drag.
//
// One engine per browser tab (window.__peLabLive), installed by the first page that mounts a live view; each
// mount hands it that page's view (ui/live/views/*.js), its controls and the server's constants.

const engine = (() => {
  const state = (window.__peLabLive = window.__peLabLive || {
    draws: [], // one entry per redraw: {view, input_at, drawn_at, painted_at, figures}
    lastInputAt: null,
    installed: false,
    mount: null, // {view, controls, data, last}
    pending: new Map(), // figure name -> redraw waiting until the figure is on screen
    linked: new WeakSet(),
  });
  state.kernels = kernels;

  const rootOf = (key) => document.querySelector(`.st-key-${CSS.escape(key)}`);
  const byLabel = (spec, label) => {
    const index = (spec.labels || spec.options.map(String)).indexOf(label);
    return index < 0 ? undefined : spec.options[index];
  };
  // A slider's value: the one its thumb is being dragged to (see `grip`), else what its range input holds.
  const rangeValue = (root) => {
    const input = root.querySelector("input[type=range]");
    if (!input) return undefined;
    return state.grip && state.grip.input === input && state.grip.value !== undefined ? state.grip.value : Number(input.value);
  };
  const readers = {
    slider: (root) => rangeValue(root),
    index_slider: (root) => rangeValue(root),
    select_slider: (root, spec) => {
      const index = rangeValue(root);
      return index === undefined ? undefined : spec.options[index];
    },
    number: (root, spec) => {
      const input = root.querySelector("input[type=number]");
      const value = input && input.value !== "" ? Number(input.value) : NaN;
      if (!Number.isFinite(value)) return undefined;
      return Math.min(spec.max ?? Infinity, Math.max(spec.min ?? -Infinity, value));
    },
    toggle: (root) => {
      const input = root.querySelector("input[type=checkbox]");
      return input ? input.checked : undefined;
    },
    selectbox: (root, spec) => {
      const input = root.querySelector("input[role=combobox]");
      return input ? byLabel(spec, input.value) : undefined;
    },
    radio: (root, spec) => {
      const input = root.querySelector("input[type=radio]:checked");
      return input ? spec.options[Number(input.value)] : undefined;
    },
    segmented: (root, spec) => {
      const button = root.querySelector("button[aria-checked=true]");
      return button ? byLabel(spec, button.textContent.trim()) : undefined;
    },
    multiselect: (root, spec) =>
      [...root.querySelectorAll("[data-tag] > span[title]")].map((tag) => byLabel(spec, tag.title)).filter((v) => v !== undefined),
    text: (root) => {
      const input = root.querySelector("input[type=text], textarea");
      return input ? input.value : undefined;
    },
  };

  // A button the view knows (Previous / Next) sets a value at once; the widget it moves only catches up when the
  // server has run, so the button's value holds until that widget shows a value of its own.
  const readValues = (mount) => {
    const values = {};
    for (const [key, spec] of Object.entries(mount.controls)) {
      const root = rootOf(key);
      const value = root ? readers[spec.kind](root, spec) : undefined;
      values[key] = value === undefined ? mount.data.values[key] : value;
      const held = mount.held[key];
      if (held && JSON.stringify(values[key]) === JSON.stringify(held.widgetShowed)) values[key] = held.value;
      else delete mount.held[key];
    }
    return values;
  };
  const pressed = (event) => {
    const mount = state.mount;
    if (!mount || !mount.view.buttons || !event.target.closest) return;
    const container = event.target.closest("[class*='st-key-']");
    const key = container && [...container.classList].find((c) => c.startsWith("st-key-"))?.slice(7);
    const press = key && mount.view.buttons[key];
    const button = container && container.querySelector("button");
    if (!press || !button || button.disabled) return;
    const shown = readValues(mount);
    for (const [name, value] of Object.entries(press(shown, mount.data))) {
      mount.held[name] = { value, widgetShowed: mount.held[name] ? mount.held[name].widgetShowed : shown[name] };
    }
  };

  const figureRoot = (name) => rootOf(`fig_${name}`);
  const graph = (name) => {
    const root = figureRoot(name);
    return root ? root.querySelector(".js-plotly-plot") : null;
  };
  // Whether a figure is on screen, as an IntersectionObserver last reported it: asking the layout instead
  // (getBoundingClientRect) in the middle of a drag forces the browser to lay the whole page out again, since the
  // slider that moved has just changed it. A figure not seen before is measured once.
  const visible = new WeakMap(); // element -> on screen
  const watcher = new IntersectionObserver((entries) => {
    for (const entry of entries) visible.set(entry.target, entry.isIntersecting && entry.boundingClientRect.height > 0);
    flushPending();
  });
  // Every figure is watched as soon as it is drawn, so that the first redraw of a drag finds its answer waiting
  // instead of measuring (which cost the first redraw a layout of the whole page).
  const watchFigures = () => {
    for (const gd of document.querySelectorAll("[class*='st-key-fig_'] .js-plotly-plot")) {
      if (!watched.has(gd)) {
        watched.add(gd);
        watcher.observe(gd);
      }
    }
  };
  const watched = new WeakSet();
  const onScreen = (element) => {
    if (visible.has(element)) return visible.get(element);
    const box = element.getBoundingClientRect();
    const shown = box.bottom > 0 && box.top < window.innerHeight && box.height > 0;
    visible.set(element, shown);
    if (!watched.has(element)) {
      watched.add(element);
      watcher.observe(element);
    }
    return shown;
  };

  // Figures off screen wait: during a drag only what the visitor sees is redrawn, the rest when it scrolls in or
  // the drag rests. A figure's latest update replaces any older one still waiting.
  const flushPending = () => {
    let redrew = false;
    for (const [name, redraw] of [...state.pending]) {
      const gd = graph(name);
      if (!gd || !onScreen(gd)) continue;
      state.pending.delete(name);
      redraw();
      redrew = true;
    }
    // what scrolled in was drawn the fast way (a canvas, the SVG): it becomes Plotly's own once scrolling rests
    if (redrew) rest();
  };
  const drawn = [];
  let plotlyMs = 0; // of the current redraw, the time spent inside Plotly (the rest is the kernels and the DOM)
  const apply = (name, update) => {
    const gd = graph(name);
    if (!gd || !window.Plotly) return;
    if (!onScreen(gd)) {
      state.pending.set(name, () => apply(name, update));
      return;
    }
    state.pending.delete(name);
    const start = performance.now();
    update(gd);
    plotlyMs += performance.now() - start;
    drawn.push(name);
  };
  // Heatmaps while a control moves: Plotly's heatmap costs about 2 ms per thousand cells to restyle, too slow for a
  // frame. So during an interaction a heatmap's cells are painted on a canvas laid exactly over its axes (the same
  // colour scale, one canvas pixel per cell, scaled without smoothing), Plotly keeps only a one-cell stand-in so
  // that moving its axes stays cheap, and when the controls rest the real trace is restyled once and the canvas
  // removed. What the visitor then hovers is Plotly's own heatmap again.
  const parseColour = (text) => {
    if (text.startsWith("#")) {
      const hex = text.length === 4 ? text.slice(1).split("").map((c) => c + c).join("") : text.slice(1);
      return [0, 2, 4].map((i) => parseInt(hex.slice(i, i + 2), 16));
    }
    return text.match(/[\d.]+/g).slice(0, 3).map(Number);
  };
  const colourTable = (scale) => {
    const stops = scale.map(([at, colour]) => [Number(at), parseColour(colour)]);
    const table = new Uint8ClampedArray(256 * 3);
    for (let i = 0; i < 256; i += 1) {
      const at = i / 255;
      let k = 0;
      while (k < stops.length - 2 && at > stops[k + 1][0]) k += 1;
      const [a, ca] = stops[k];
      const [b, cb] = stops[k + 1];
      const f = b > a ? Math.min(1, Math.max(0, (at - a) / (b - a))) : 0;
      for (let c = 0; c < 3; c += 1) table[3 * i + c] = ca[c] + f * (cb[c] - ca[c]);
    }
    return table;
  };
  // While a control moves, a figure's margins hold still: Plotly otherwise measures every tick label again to grow
  // its margins (automargin), a second layout pass that costs about as much as the redraw itself. The margins the
  // figure has are written in as fixed numbers with its first change, and given back once the controls rest.
  const heldMargins = new Map(); // figure's div -> the layout attributes that restore it at rest
  const holdMargins = (gd) => {
    const full = gd._fullLayout;
    if (!state.interacting || heldMargins.has(gd) || !full || !full._size) return {};
    const layout = gd.layout || {};
    const margin = layout.margin || {};
    const restore = {};
    const hold = {};
    for (const side of ["l", "r", "t", "b"]) {
      restore[`margin.${side}`] = margin[side] === undefined ? null : margin[side];
      hold[`margin.${side}`] = full._size[side];
    }
    restore["margin.autoexpand"] = margin.autoexpand === undefined ? null : margin.autoexpand;
    hold["margin.autoexpand"] = false;
    for (const name of Object.keys(full).filter((key) => /^[xy]axis\d*$/.test(key))) {
      const axis = layout[name] || {};
      restore[`${name}.automargin`] = axis.automargin === undefined ? null : axis.automargin;
      hold[`${name}.automargin`] = false;
    }
    heldMargins.set(gd, restore);
    return hold;
  };
  const releaseMargins = () => {
    for (const [gd, restore] of [...heldMargins]) {
      heldMargins.delete(gd);
      if (gd.isConnected) window.Plotly.relayout(gd, restore);
    }
  };
  // Plotly's three calls, each carrying the held margins with a figure's first change in an interaction
  const plotly = {
    restyle: (gd, traceUpdate, traces) => {
      const hold = holdMargins(gd);
      return Object.keys(hold).length
        ? window.Plotly.update(gd, traceUpdate, hold, traces)
        : window.Plotly.restyle(gd, traceUpdate, traces);
    },
    relayout: (gd, layoutUpdate) => window.Plotly.relayout(gd, { ...holdMargins(gd), ...layoutUpdate }),
    update: (gd, traceUpdate, layoutUpdate, traces) =>
      window.Plotly.update(gd, traceUpdate, { ...holdMargins(gd), ...layoutUpdate }, traces),
  };
  const overlays = new Map(); // figure name -> {gd, canvas, exact}
  const axisRange = (values, reversed) => {
    const step = values.length > 1 ? values[1] - values[0] : 1;
    const range = [values[0] - step / 2, values[values.length - 1] + step / 2];
    return reversed ? [range[1], range[0]] : range;
  };
  // Whether `cells` keeps the heatmap's shape and labels: then its axes stay put, Plotly need not be called at all,
  // and the canvas simply covers the old cells until the controls rest.
  const plainList = (v) => (v === undefined || v === null ? null : Array.from(v, (e) => (typeof e === "number" ? e : String(e))));
  const sameShape = (full, cells) => {
    const z = full.z;
    if (!z || z.length !== cells.z.length || !z[0] || z[0].length !== cells.z[0].length) return false;
    const same = (a, b) => a === null || b === null || (a.length === b.length && a.every((v, i) => v === b[i]));
    return same(plainList(full.x), plainList(cells.x)) && same(plainList(full.y), plainList(cells.y));
  };
  const paintHeatmap = (name, gd, trace, cells) => {
    const full = gd._fullData[trace];
    const xa = gd._fullLayout[(full.xaxis || "x").replace("x", "xaxis")];
    const ya = gd._fullLayout[(full.yaxis || "y").replace("y", "yaxis")];
    const key = `${name}#${trace}`;
    let overlay = overlays.get(key);
    if (!overlay || overlay.gd !== gd || !overlay.canvas.isConnected) {
      const canvas = document.createElement("canvas");
      canvas.className = "pe-live-heatmap";
      canvas.style.cssText = "position:absolute;pointer-events:none;image-rendering:pixelated;";
      const holder = gd.querySelector(".svg-container");
      holder.insertBefore(canvas, holder.children[1] || null);
      overlay = { gd, canvas, table: colourTable(full.colorscale), reversed: ya.autorange === "reversed" };
      overlays.set(key, overlay);
    }
    const { z, x, y, zmin, zmax } = cells;
    const numeric = (v) => !v || Array.from(v).every((e) => typeof e === "number");
    if (!sameShape(full, cells) || fastAxes.moved(gd)) {
      // the axes must move (more positions, another word): the canvas keeps the plot area's pixels and fastAxes
      // labels them for the new cells, a category axis with its words
      const ranges = {};
      const labels = {};
      for (const [axis, values, reversed] of [[xa, x, false], [ya, y, overlay.reversed]]) {
        const list = values ? Array.from(values) : Array.from({ length: axis === xa ? z[0].length : z.length }, (_, i) => i);
        if (numeric(list) && axis.type !== "category") ranges[axis._name] = axisRange(list, reversed);
        else {
          ranges[axis._name] = reversed ? [list.length - 0.5, -0.5] : [-0.5, list.length - 0.5];
          labels[axis._name] = list.map(String);
        }
      }
      fastAxes.move(gd, ranges, false, false, labels);
    }
    const canvas = overlay.canvas;
    canvas.style.left = `${xa._offset}px`;
    canvas.style.top = `${ya._offset}px`;
    canvas.style.width = `${xa._length}px`;
    canvas.style.height = `${ya._length}px`;
    const rows = z.length;
    const cols = z[0].length;
    if (canvas.width !== cols || canvas.height !== rows) {
      canvas.width = cols;
      canvas.height = rows;
    }
    const image = canvas.getContext("2d").createImageData(cols, rows);
    const pixels = image.data;
    const scale = 255 / (zmax - zmin || 1);
    for (let r = 0; r < rows; r += 1) {
      const row = z[overlay.reversed ? r : rows - 1 - r];
      for (let c = 0; c < cols; c += 1) {
        const at = Math.round(Math.min(255, Math.max(0, (row[c] - zmin) * scale))) * 3;
        const o = 4 * (r * cols + c);
        pixels[o] = overlay.table[at];
        pixels[o + 1] = overlay.table[at + 1];
        pixels[o + 2] = overlay.table[at + 2];
        pixels[o + 3] = 255;
      }
    }
    canvas.getContext("2d").putImageData(image, 0, 0);
    overlay.exact = () => {
      const update = { z: [z], zmin: [zmin], zmax: [zmax] };
      if (x) update.x = [x];
      if (y) update.y = [y];
      window.Plotly.update(gd, update, fastAxes.release(gd), [trace]);
    };
  };
  const touched = new Map(); // figure name -> the exact restyle to run at rest
  const hiddenHere = new Set(); // markers and labels this code hid (Plotly's restyle at rest does not show them again)
  const addedHere = new Set(); // elements this code drew in place of Plotly's, removed at rest
  // A group of a thousand markers or bars drawn in its place is made transparent, not hidden: visibility is
  // inherited, so hiding the group would make the browser restyle every element in it, opacity does not.
  const fadedHere = new Set();
  const fade = (group) => {
    group.style.opacity = "0";
    fadedHere.add(group);
  };
  const MANY_BARS = 64;
  const traceElement = (gd, index) =>
    [...gd.querySelectorAll("g.trace")].find((el) => el.__data__ && el.__data__[0] && el.__data__[0].trace && el.__data__[0].trace.index === index);
  // The range an autoranged axis takes for these series, as Plotly's autorange gives it (5 % of the length padded
  // on each side, none across for lines alone, zero kept for bars and rangemode "tozero"), in the axis's own units
  // (decades on a log axis); null when no value is finite.
  const autoRange = (axis, series) => {
    const log = axis.type === "log";
    let low = Infinity;
    let high = -Infinity;
    let padded = false;
    for (const { values, pad, zero } of series) {
      for (const v of values) {
        const u = log ? (v > 0 ? Math.log10(v) : NaN) : Number(v);
        if (Number.isFinite(u)) {
          low = Math.min(low, u);
          high = Math.max(high, u);
        }
      }
      if (zero && !log) [low, high] = [Math.min(low, 0), Math.max(high, 0)];
      padded = padded || pad;
    }
    if (!(low <= high)) return null;
    if (axis.rangemode === "tozero" && !log) [low, high] = [Math.min(low, 0), Math.max(high, 0)];
    if (axis.rangemode === "nonnegative" && !log) low = Math.max(low, 0);
    if (low === high) [low, high] = [low - 1, high + 1];
    const extra = padded ? ((high - low) * 0.05) / 0.9 : 0;
    return axis.autorange === "reversed" ? [high + extra, low - extra] : [low - extra, high + extra];
  };
  const movesFrom = (shown, range) => {
    const span = Math.abs(shown[1] - shown[0]) || 1;
    return Math.abs(range[0] - shown[0]) > 0.005 * span || Math.abs(range[1] - shown[1]) > 0.005 * span;
  };
  const DIRECT_KEYS = ["x", "y", "name", "text", "mode", "customdata"];
  const axisOf = (gd, full, letter) => gd._fullLayout[(full[`${letter}axis`] || letter).replace(letter, `${letter}axis`)];
  // A trace's attribute as it stands: this update, an earlier one of this interaction, or what Plotly drew.
  const latest = (gd, name, update, indices) => (index, key) => {
    const j = indices.indexOf(index);
    if (j >= 0 && update[key] && update[key][j] !== undefined) return update[key][j];
    const earlier = touched.get(name);
    const e = earlier ? earlier.traces.indexOf(index) : -1;
    if (e >= 0 && earlier.update[key] && earlier.update[key][e] !== undefined) return earlier.update[key][e];
    return gd._fullData[index][key];
  };
  // The traces to draw straight into the SVG (every visible line, marker or bar trace, its latest values), or null
  // when a named trace is one Plotly must draw (another type, a bar count that changes, markers with none to copy).
  const planTraces = (gd, indices, valueOf) => {
    const plans = [];
    for (const full of gd._fullData) {
      const named = indices.includes(full.index);
      const drawable = ["scatter", "bar"].includes(full.type) && full.visible === true && full.orientation !== "h";
      if (!drawable) {
        if (named) return null;
        continue;
      }
      const element = traceElement(gd, full.index);
      const x = Array.from(valueOf(full.index, "x") || []);
      const y = Array.from(valueOf(full.index, "y") || []);
      const mode = full.type === "bar" ? "" : String(valueOf(full.index, "mode") || full.mode || "");
      if (!element || x.length !== y.length) return null;
      if (full.type === "bar" && x.length !== full._length) return null;
      if (mode.includes("markers") && x.length && !element.querySelector("g.points > path.point")) return null;
      if (mode.includes("lines") && x.length && !element.querySelector("path.js-line")) return null;
      const text = valueOf(full.index, "text");
      plans.push({ full, named, x, y, mode, text, element, xa: axisOf(gd, full, "x"), ya: axisOf(gd, full, "y") });
    }
    return plans;
  };
  // Axes that autorange and whose data now needs another range: moved by fastAxes, without Plotly.
  const moveAxes = (gd, plans) => {
    const series = new Map(); // axis name -> [{values, pad, zero}]
    for (const plan of plans) {
      for (const [axis, values, across] of [[plan.xa, plan.x, true], [plan.ya, plan.y, false]]) {
        if (!axis.autorange || axis.type === "category" || axis.type === "multicategory") continue;
        const pad = !across || plan.mode.includes("markers") || plan.mode.includes("text") || plan.full.type === "bar";
        if (!series.has(axis._name)) series.set(axis._name, []);
        series.get(axis._name).push({ values, pad, zero: plan.full.type === "bar" && !across });
      }
    }
    const moves = {};
    for (const [name, list] of series) {
      const range = autoRange(gd._fullLayout[name], list);
      if (range && movesFrom(fastAxes.range(gd, name), range)) moves[name] = range;
    }
    if (Object.keys(moves).length) fastAxes.move(gd, moves, true);
    return new Set(Object.keys(moves));
  };
  const pixelsOf = (gd, axis) =>
    axis.type === "category" || axis.type === "multicategory"
      ? (v) => axis.c2p(v)
      : fastAxes.mapper(axis, fastAxes.range(gd, axis._name));
  // Many markers (three 1024-dimension vectors): one path holding every marker's symbol, moved to its point, in
  // place of a path per marker, for the same reason as the bars. The symbol is Plotly's own (its absolute M, L, H,
  // V, A and Z commands shifted); any other path keeps the marker per element.
  const symbolAt = (d) => {
    const commands = [...String(d).matchAll(/([MLHVAZ])([^A-Za-z]*)/g)];
    if (!commands.length || commands.map((c) => c[0]).join("").length !== String(d).replace(/\s+$/, "").length) return null;
    // per number: 0 kept, 1 shifted across, 2 shifted up or down (an arc's endpoint is its last two of seven)
    const roles = { M: [1, 2], L: [1, 2], H: [1], V: [2], A: [0, 0, 0, 0, 0, 1, 2], Z: [] };
    const parts = commands.map(([, letter, rest]) => {
      const numbers = rest.split(/[\s,]+/).filter(Boolean).map(Number);
      const role = roles[letter];
      return { letter, numbers, shifts: numbers.map((_, i) => role[i % Math.max(1, role.length)] || 0) };
    });
    return (x, y) =>
      parts
        .map(({ letter, numbers, shifts }) =>
          letter + numbers.map((v, i) => +(v + (shifts[i] === 1 ? x : shifts[i] === 2 ? y : 0)).toFixed(2)).join(","))
        .join("");
  };
  // Many round markers: painted on a canvas over the subplot (no SVG element to lay out at all)
  const paintMarkers = (element, group, first, px, py, xa, ya) => {
    const d = first.getAttribute("d") || "";
    const circle = d.match(/^M([\d.]+),0A([\d.]+),([\d.]+) 0 1,1 0,-[\d.]+A[\d.]+,[\d.]+ 0 0,1 [\d.]+,0Z$/);
    const holder = element.closest(".svg-container");
    if (!circle || !holder) return false;
    let canvas = element.__peLiveMarkers;
    if (!canvas || !canvas.isConnected) {
      canvas = document.createElement("canvas");
      canvas.className = "pe-live-markers";
      canvas.style.cssText = "position:absolute;pointer-events:none;";
      holder.appendChild(canvas);
      element.__peLiveMarkers = canvas;
      fade(group);
      addedHere.add(canvas);
    }
    const ratio = window.devicePixelRatio || 1;
    const [width, height] = [xa._length, ya._length];
    Object.assign(canvas.style, { left: `${xa._offset}px`, top: `${ya._offset}px`, width: `${width}px`, height: `${height}px` });
    if (canvas.width !== Math.round(width * ratio) || canvas.height !== Math.round(height * ratio)) {
      canvas.width = Math.round(width * ratio);
      canvas.height = Math.round(height * ratio);
    }
    const pen = canvas.getContext("2d");
    pen.setTransform(ratio, 0, 0, ratio, 0, 0);
    pen.clearRect(0, 0, width, height);
    const style = first.style;
    const radius = Number(circle[1]);
    pen.fillStyle = style.fill || "black";
    pen.globalAlpha = Number(style.fillOpacity || style.opacity || 1);
    pen.beginPath();
    px.forEach((x, i) => {
      if (!Number.isFinite(x) || !Number.isFinite(py[i])) return;
      pen.moveTo(x + radius, py[i]);
      pen.arc(x, py[i], radius, 0, 2 * Math.PI);
    });
    pen.fill();
    const strokeWidth = parseFloat(style.strokeWidth || "0");
    if (strokeWidth > 0 && style.stroke && style.stroke !== "none") {
      pen.globalAlpha = Number(style.strokeOpacity || 1);
      pen.strokeStyle = style.stroke;
      pen.lineWidth = strokeWidth;
      pen.stroke();
    }
    return true;
  };
  const drawMarkersAsOne = (element, group, px, py, xa, ya) => {
    const first = group.querySelector("path.point");
    if (first && paintMarkers(element, group, first, px, py, xa, ya)) return true;
    const symbol = first && symbolAt(first.getAttribute("d"));
    if (!symbol) return false;
    let joined = element.querySelector("path.pe-live-markers");
    if (!joined) {
      joined = document.createElementNS("http://www.w3.org/2000/svg", "path");
      joined.setAttribute("class", "pe-live-markers");
      joined.setAttribute("style", first.getAttribute("style") || "");
      group.parentNode.insertBefore(joined, group.nextSibling);
      fade(group);
      addedHere.add(joined);
    }
    joined.setAttribute("d", px.map((v, i) => (Number.isFinite(v) && Number.isFinite(py[i]) ? symbol(v, py[i]) : "")).join(""));
    return true;
  };
  const drawTrace = ({ full, x, y, mode, text, element, xa, ya }, gd) => {
    const toX = pixelsOf(gd, xa);
    const toY = pixelsOf(gd, ya);
    const px = x.map(toX);
    const py = y.map(toY);
    if (full.type === "bar") {
      const base = toY(0);
      const bars = [...element.querySelectorAll("g.point > path")];
      const sides = bars.map((bar) => (bar.getAttribute("d") || "").match(/^M([\d.-]+),[\d.-]+V[\d.-]+H([\d.-]+)V/));
      if (bars.length <= MANY_BARS) {
        bars.forEach((bar, i) => {
          if (sides[i] && Number.isFinite(py[i])) bar.setAttribute("d", `M${sides[i][1]},${base}V${py[i]}H${sides[i][2]}V${base}Z`);
        });
        return;
      }
      // many bars (a 1024-dimension vector): one path for all of them while the control moves, a single write
      // where a path per bar made the browser lay out a thousand elements each frame
      let joined = element.querySelector("path.pe-live-bars");
      if (!joined) {
        const points = element.querySelector("g.points");
        joined = document.createElementNS("http://www.w3.org/2000/svg", "path");
        joined.setAttribute("class", "pe-live-bars");
        joined.setAttribute("style", bars[0].getAttribute("style") || "");
        points.parentNode.insertBefore(joined, points);
        fade(points);
        addedHere.add(joined);
      }
      joined.setAttribute(
        "d",
        sides.map((side, i) => (side && Number.isFinite(py[i]) ? `M${side[1]},${base}V${py[i].toFixed(2)}H${side[2]}V${base}Z` : "")).join(""),
      );
      return;
    }
    const line = element.querySelector("path.js-line");
    if (line) {
      let path = "";
      let pen = "M";
      px.forEach((v, i) => {
        if (!Number.isFinite(v) || !Number.isFinite(py[i])) {
          pen = "M";
          return;
        }
        path += `${pen}${v.toFixed(2)},${py[i].toFixed(2)}`;
        pen = "L";
      });
      line.setAttribute("d", mode.includes("lines") ? path : "");
    }
    const group = element.querySelector("g.points");
    const wantedMarkers = mode.includes("markers") ? px.length : 0;
    const asOne = group && wantedMarkers > MANY_BARS && drawMarkersAsOne(element, group, px, py, xa, ya);
    if (group && !asOne) {
      const points = [...group.querySelectorAll("path.point")];
      const wanted = wantedMarkers;
      for (let i = points.length; i < wanted; i += 1) points.push(group.appendChild(points[points.length - 1].cloneNode(true)));
      points.forEach((point, i) => {
        const shown = i < wanted && Number.isFinite(px[i]) && Number.isFinite(py[i]);
        point.style.visibility = shown ? "" : "hidden";
        if (!shown) hiddenHere.add(point);
        if (shown) point.setAttribute("transform", `translate(${px[i]},${py[i]})`);
      });
    }
    element.querySelectorAll("g.textpoint > text").forEach((label, i) => {
      const shown = mode.includes("text") && i < px.length && Number.isFinite(px[i]) && Number.isFinite(py[i]);
      label.style.visibility = shown ? "" : "hidden";
      if (!shown) {
        hiddenHere.add(label);
        return;
      }
      label.setAttribute("x", px[i]);
      label.setAttribute("y", py[i]);
      if (text && text[i] !== undefined && text[i] !== null && label.childNodes.length === 1) label.textContent = String(text[i]);
    });
  };
  // Lines, markers and bars while a control moves: their new numbers are written straight into the SVG Plotly drew
  // (a path's d, a marker's position, a bar's top, a label's place), which costs a millisecond where Plotly's
  // restyle costs tens; an axis whose range must follow moves by fastAxes. Plotly's exact restyle follows at rest.
  const directRestyle = (name, gd, update, traces) => {
    if (!state.interacting || Object.keys(update).some((k) => !DIRECT_KEYS.includes(k))) return false;
    const indices = traces || gd._fullData.map((_, i) => i);
    const plans = planTraces(gd, indices, latest(gd, name, update, indices));
    if (!plans) return false;
    const moved = moveAxes(gd, plans);
    for (const plan of plans) {
      if (plan.named || moved.has(plan.xa._name) || moved.has(plan.ya._name) || fastAxes.moved(gd)) drawTrace(plan, gd);
    }
    const previous = touched.get(name);
    const merged = previous ? mergeUpdates(previous.update, previous.traces, update, indices) : { update, traces: indices };
    touched.set(name, { gd, ...merged });
    return true;
  };
  // Later updates of the same traces win; the exact restyle at rest carries every attribute any of them set.
  const mergeUpdates = (before, beforeTraces, after, afterTraces) => {
    const traces = [...new Set([...beforeTraces, ...afterTraces])];
    const update = {};
    for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
      update[key] = traces.map((t) => {
        const a = afterTraces.indexOf(t);
        if (key in after && a >= 0) return after[key][a];
        const b = beforeTraces.indexOf(t);
        return key in before && b >= 0 ? before[key][b] : undefined;
      });
    }
    return { update, traces };
  };
  const settleDirect = () => {
    for (const element of hiddenHere) element.style.visibility = "";
    hiddenHere.clear();
    for (const element of addedHere) element.remove();
    addedHere.clear();
    for (const group of fadedHere) group.style.opacity = "";
    fadedHere.clear();
    for (const [name, { gd, update, traces }] of [...touched]) {
      touched.delete(name);
      if (gd.isConnected) window.Plotly.update(gd, update, fastAxes.release(gd), traces);
    }
    // an axis moved for a figure whose data is already exact (a heatmap's, settled above)
    for (const gd of fastAxes.figures()) {
      const layout = fastAxes.release(gd);
      if (gd.isConnected) window.Plotly.relayout(gd, layout);
    }
  };

  // Figures that switch between whole states (the walkthrough's steps: another matrix, shape, labels and scale):
  // Plotly redraws such a figure whole, too slow for a frame. So the states a visitor is likely to reach next are
  // drawn ahead by Plotly, one at a time while the page is idle, into copies of the figure kept hidden over it;
  // switching to one shows its copy at once, and Plotly's own figure takes that state once the controls rest.
  const pools = new Map(); // figure name -> {gd, layer, drawn: Map(key -> div), queue: [[key, traceUpdate, layoutUpdate]], shown}
  const POOL_SIZE = 24;
  const setPath = (target, path, value) => {
    const parts = path.split(".");
    let node = target;
    for (const part of parts.slice(0, -1)) {
      if (!node[part] || typeof node[part] !== "object") node[part] = {};
      node = node[part];
    }
    if (value === null || value === undefined) delete node[parts[parts.length - 1]];
    else node[parts[parts.length - 1]] = value;
  };
  // The figure `gd` shows after Plotly.update(gd, traceUpdate, layoutUpdate), as a new figure to draw
  const figureAfter = (gd, traceUpdate, layoutUpdate) => {
    const data = JSON.parse(JSON.stringify(gd.data));
    const layout = JSON.parse(JSON.stringify(gd.layout));
    // Plotly writes the axis type and range it chose back into the figure's layout: a copy must choose again
    for (const [key, axis] of Object.entries(layout)) {
      if (!/^[xy]axis\d*$/.test(key) || !axis || axis.autorange === false) continue;
      delete axis.type;
      delete axis.range;
      if (axis.autorange !== "reversed") axis.autorange = true;
    }
    for (const [key, values] of Object.entries(traceUpdate)) data.forEach((trace, i) => setPath(trace, key, values[i % values.length]));
    for (const [key, value] of Object.entries(layoutUpdate)) setPath(layout, key, value);
    layout.width = gd._fullLayout.width;
    layout.height = gd._fullLayout.height;
    return { data, layout };
  };
  const poolFor = (name, gd) => {
    let pool = pools.get(name);
    if (pool && pool.gd === gd && pool.layer.isConnected) return pool;
    if (pool) pool.layer.remove();
    const host = gd.parentElement;
    if (getComputedStyle(host).position === "static") host.style.position = "relative";
    const layer = document.createElement("div");
    layer.className = "pe-live-pool";
    layer.style.cssText = `position:absolute;left:${gd.offsetLeft}px;top:${gd.offsetTop}px;pointer-events:none;z-index:2;`;
    host.appendChild(layer);
    pool = { gd, layer, drawn: new Map(), queue: [], shown: null };
    pools.set(name, pool);
    return pool;
  };
  let drawingAhead = false;
  const drawAhead = () => {
    if (drawingAhead || !window.Plotly) return;
    const busy = () => state.interacting || state.grip;
    const pool = [...pools.values()].find((p) => p.queue.length && p.gd.isConnected);
    if (!pool) return;
    if (busy()) {
      setTimeout(drawAhead, 200); // a copy drawn now would hold up the visitor's next frame
      return;
    }
    const [key, traceUpdate, layoutUpdate] = pool.queue.shift();
    if (pool.drawn.has(key)) {
      drawAhead();
      return;
    }
    drawingAhead = true;
    const { data, layout } = figureAfter(pool.gd, traceUpdate, layoutUpdate);
    const copy = document.createElement("div");
    copy.style.cssText = `position:absolute;left:0;top:0;visibility:hidden;background:white;width:${layout.width}px;height:${layout.height}px;`;
    pool.layer.appendChild(copy);
    window.Plotly.newPlot(copy, data, layout, { staticPlot: true, displayModeBar: false, responsive: false })
      .then(() => {
        // a copy is not one of the page's figures: anything that finds figures by Plotly's class must not find it
        // (Plotly's stylesheet stacked its layers by that class: inline styles keep them stacked)
        copy.classList.remove("js-plotly-plot");
        copy.classList.add("pe-live-copy");
        copy.querySelectorAll(".main-svg").forEach((layer) => Object.assign(layer.style, { position: "absolute", top: "0", left: "0" }));
        pool.drawn.set(key, copy);
        while (pool.drawn.size > POOL_SIZE) {
          const [oldest, div] = pool.drawn.entries().next().value;
          if (div === pool.shown) break;
          pool.drawn.delete(oldest);
          window.Plotly.purge(div);
          div.remove();
        }
      })
      .catch(() => copy.remove())
      .finally(() => {
        drawingAhead = false;
        (window.requestIdleCallback || setTimeout)(drawAhead);
      });
  };
  const hidePools = () => {
    for (const pool of pools.values()) {
      if (pool.shown) pool.shown.style.visibility = "hidden";
      pool.shown = null;
      pool.exact = null;
    }
  };
  const settlePools = () => {
    for (const pool of pools.values()) {
      if (pool.exact && pool.gd.isConnected) pool.exact();
    }
    hidePools();
  };
  const settleHeatmaps = () => {
    for (const [name, overlay] of [...overlays]) {
      overlays.delete(name);
      if (overlay.gd.isConnected && overlay.exact) overlay.exact();
      overlay.canvas.remove();
    }
  };

  const ctx = {
    kernels,
    // Run `draw` now if the figure is on screen, else when it scrolls in: the work of a figure nobody sees waits.
    // (The server's rerun after the control is released redraws it anyway.)
    when: (name, draw) => {
      const gd = graph(name);
      if (gd && onScreen(gd)) draw();
      else if (gd) state.pending.set(name, draw);
    },
    // `ranges` ({axis name: [from, to]}, a log axis in decades): axes the figure sets itself, not by autorange
    restyle: (name, traceUpdate, traces, ranges) =>
      apply(name, (gd) => {
        if (ranges && state.interacting) fastAxes.move(gd, ranges, true, true);
        if (directRestyle(name, gd, traceUpdate, traces)) return;
        touched.delete(name); // Plotly draws it exactly now: an older direct update must not come back at rest
        const layout = fastAxes.release(gd);
        for (const [axis, range] of Object.entries(ranges || {})) layout[`${axis}.range`] = range;
        if (Object.keys(layout).length) plotly.update(gd, traceUpdate, layout, traces);
        else plotly.restyle(gd, traceUpdate, traces);
      }),
    // cells: {z (rows of values), x (column labels), y (row labels), zmin, zmax}; `trace` the heatmap's index
    heatmap: (name, cells, trace = 0) =>
      apply(name, (gd) =>
        gd.isConnected && state.interacting
          ? paintHeatmap(name, gd, trace, cells)
          : window.Plotly.restyle(
              gd,
              { z: [cells.z], zmin: [cells.zmin], zmax: [cells.zmax], ...(cells.x ? { x: [cells.x] } : {}), ...(cells.y ? { y: [cells.y] } : {}) },
              [trace],
            )),
    relayout: (name, layoutUpdate) => apply(name, (gd) => plotly.relayout(gd, layoutUpdate)),
    // A whole state of the figure (Plotly.update's arguments) under `key`: shown from the states drawn ahead while
    // a control moves, else drawn by Plotly now.
    state: (name, key, traceUpdate, layoutUpdate) =>
      apply(name, (gd) => {
        const pool = poolFor(name, gd);
        const copy = pool.drawn.get(key);
        if (state.interacting && copy) {
          if (pool.shown && pool.shown !== copy) pool.shown.style.visibility = "hidden";
          copy.style.visibility = "visible";
          pool.shown = copy;
          pool.exact = () => window.Plotly.update(gd, traceUpdate, layoutUpdate);
          return;
        }
        if (pool.shown) pool.shown.style.visibility = "hidden";
        pool.shown = null;
        pool.exact = null;
        touched.delete(name);
        plotly.update(gd, traceUpdate, layoutUpdate);
      }),
    // States of the figure to draw ahead, most likely first: [[key, traceUpdate, layoutUpdate], ...]
    ahead: (name, states) => {
      const gd = graph(name);
      if (!gd || !gd._fullLayout) return;
      const pool = poolFor(name, gd);
      pool.queue = states.filter(([key]) => !pool.drawn.has(key));
      setTimeout(drawAhead, 0);
    },
    update: (name, traceUpdate, layoutUpdate, traces) =>
      apply(name, (gd) => {
        touched.delete(name);
        plotly.update(gd, traceUpdate, layoutUpdate, traces);
      }),
    // The figure's title is a line of the page above it (ui.common.show_figure); it follows the figure.
    title: (name, text) => {
      const gd = graph(name);
      if (gd && !onScreen(gd)) {
        const later = state.pending.get(name);
        state.pending.set(name, () => { if (later) later(); ctx.title(name, text); });
        return;
      }
      const root = rootOf(`figtitle_${name}`);
      const strong = root && root.querySelector("strong");
      if (strong && strong.firstChild && strong.firstChild.nodeType === Node.TEXT_NODE) strong.firstChild.data = text;
    },
    // A number the page shows in st.metric inside a keyed container: its text node is replaced in place, so
    // Streamlit's own next render finds the node it made.
    metrics: (key, texts) => {
      const root = rootOf(key);
      if (!root) return;
      root.querySelectorAll("[data-testid=stMetricValue]").forEach((value, i) => {
        const walker = document.createTreeWalker(value, NodeFilter.SHOW_TEXT);
        const node = walker.nextNode();
        if (node && texts[i] !== undefined) node.data = texts[i];
      });
    },
    graph,
  };

  let drawing = false;
  let again = false;
  const draw = () => {
    const mount = state.mount;
    if (!mount || !window.Plotly) return;
    if (drawing) {
      again = true;
      return;
    }
    const values = readValues(mount);
    const changed = Object.keys(values).filter((k) => JSON.stringify(values[k]) !== JSON.stringify(mount.last[k]));
    if (!changed.length) return;
    drawing = true;
    drawn.length = 0;
    plotlyMs = 0;
    const inputAt = state.lastInputAt;
    const startedAt = performance.now();
    try {
      mount.view.redraw({ ...ctx, values, changed: new Set(changed), data: mount.data });
      mount.last = values;
    } catch (error) {
      console.error("pe-lab live view", error);
    } finally {
      drawing = false;
    }
    const record = {
      view: mount.name, changed, input_at: inputAt, started_at: startedAt, drawn_at: performance.now(), figures: [...drawn],
      plotly_ms: plotlyMs,
    };
    state.draws.push(record);
    if (state.draws.length > 2000) state.draws.splice(0, 1000);
    requestAnimationFrame(() => { record.painted_at = performance.now(); });
    if (again) {
      again = false;
      queueMicrotask(draw);
    }
  };

  // A dragged slider's value, read from the pointer in the same event instead of waiting for React to write it
  // into the widget a frame later: the slider (react-aria) moves its thumb by the pointer's travel since it was
  // pressed (a press on the track first puts the thumb there), over the track's width, snapped to the step; the
  // same arithmetic here gives the value the thumb will show. The widget's own value takes over on release.
  const SLIDERS = new Set(["slider", "select_slider", "index_slider"]);
  const grip = (event) => {
    state.grip = null;
    const mount = state.mount;
    const container = mount && event.target.closest ? event.target.closest("[class*='st-key-']") : null;
    const key = container && [...container.classList].find((c) => c.startsWith("st-key-"))?.slice(7);
    const spec = key && mount.controls[key];
    const input = spec && SLIDERS.has(spec.kind) ? container.querySelector("input[type=range]") : null;
    const track = input ? container.querySelector('[role="group"] > [data-orientation="horizontal"]') : null;
    const thumb = input ? input.parentElement && input.parentElement.parentElement : null;
    if (!track || !thumb || !track.contains(thumb)) return;
    const box = track.getBoundingClientRect();
    const onThumb = thumb.contains(event.target);
    const thumbBox = thumb.getBoundingClientRect();
    const from = onThumb ? thumbBox.left + thumbBox.width / 2 : event.clientX;
    state.grip = { input, left: box.left, width: box.width, startX: event.clientX, from, value: undefined };
  };
  const dragTo = (event) => {
    const held = state.grip;
    if (!held || !held.width || !(event.buttons & 1)) return;
    const min = Number(held.input.min);
    const max = Number(held.input.max);
    const step = Number(held.input.step) || 1;
    const share = Math.min(1, Math.max(0, (held.from + event.clientX - held.startX - held.left) / held.width));
    const value = Math.min(max, Math.max(min, min + Math.round((share * (max - min)) / step) * step));
    if (value === held.value) return;
    held.value = value;
    draw();
    rest();
  };

  let restTimer = null;
  const rest = () => {
    clearTimeout(restTimer);
    restTimer = setTimeout(() => {
      state.interacting = false;
      settlePools();
      settleHeatmaps();
      settleDirect();
      releaseMargins();
    }, 300);
  };
  const install = () => {
    if (state.installed) return;
    state.installed = true;
    const noteInput = (event) => {
      state.lastInputAt = event.timeStamp;
      state.interacting = true;
    };
    for (const type of ["pointerdown", "pointermove", "keydown", "input", "click", "touchmove"]) {
      document.addEventListener(type, noteInput, { capture: true, passive: true });
    }
    const soon = () => queueMicrotask(() => { draw(); rest(); });
    document.addEventListener("pointerdown", grip, { capture: true, passive: true });
    document.addEventListener("pointermove", dragTo, { capture: true, passive: true });
    for (const type of ["pointerup", "pointercancel"]) {
      document.addEventListener(type, () => { state.grip = null; }, { capture: true, passive: true });
    }
    document.addEventListener("click", pressed, true);
    for (const type of ["input", "change", "click", "keyup", "pointerup"]) document.addEventListener(type, soon, true);
    // React writes a dragged slider's value into its hidden input's attributes; a click on a number input's
    // step button or a toggle changes the DOM in the same task: one observer sees both.
    new MutationObserver(soon).observe(document.body, {
      subtree: true, attributes: true, attributeFilter: ["aria-valuetext", "value", "aria-checked", "data-selected"],
    });
    // Streamlit's page scrolls inside its main section, not the window: a scroll seen while capturing covers both
    document.addEventListener("scroll", flushPending, { capture: true, passive: true });
  };

  // Pointing at a position in one figure shows it in the others (the view's `point` handler), on hover and tap.
  const link = (mount) => {
    if (!mount.view.pointers) return;
    for (const [name, toPosition] of Object.entries(mount.view.pointers)) {
      const gd = graph(name);
      if (!gd || !gd.on || state.linked.has(gd)) continue;
      state.linked.add(gd);
      const show = (event) => {
        const current = state.mount;
        if (!current || !current.view.point || !event || !event.points || !event.points.length) return;
        const position = toPosition(event.points[0]);
        if (position === undefined) return;
        current.view.point({ ...ctx, values: current.last, data: current.data }, position, name);
        state.pointed = { figure: name, position, at: performance.now() };
        rest(); // what pointing drew straight into the SVG becomes Plotly's own a moment later
      };
      gd.on("plotly_hover", show);
      gd.on("plotly_click", show);
      gd.on("plotly_unhover", () => {
        const current = state.mount;
        if (current && current.view.point) current.view.point({ ...ctx, values: current.last, data: current.data }, null, name);
        state.pointed = null;
      });
    }
  };

  const warmed = new Set(); // views whose code has run once while the page rested (`warm`)
  const readyContext = (current) => ({ ...ctx, values: readValues(current), data: current.data });
  const mount = (name, view, payload) => {
    install();
    state.pending.clear();
    if (!state.interacting) {
      settleHeatmaps();
      hidePools();
      touched.clear(); // the server's rerun drew these figures exactly
      heldMargins.clear(); // ... with their own margins
    }
    // The server drew every figure for payload.values: the view starts from there.
    // A value a button set (Next) that this rerun confirms stays held until its widget catches up: Streamlit may
    // mount this view before it renders the widget's new value, and the old one is not the visitor's.
    const previous = state.mount && state.mount.name === name ? state.mount.held : {};
    const held = {};
    for (const [key, hold] of Object.entries(previous)) {
      if (JSON.stringify(hold.value) === JSON.stringify(payload.values[key])) held[key] = hold;
    }
    state.mount = { name, view, controls: payload.controls, data: payload, last: { ...payload.values }, held };
    let tries = 0;
    let ready = !view.ready;
    const linkWhenDrawn = () => {
      link(state.mount);
      watchFigures();
      // the view's work once its figures are drawn (the walkthrough's states drawn ahead)
      if (!ready && state.mount.view === view && view.ready(readyContext(state.mount))) ready = true;
      tries += 1;
      if (tries < 40) setTimeout(linkWhenDrawn, 250);
    };
    linkWhenDrawn();
    draw(); // a value the visitor moved while the server was busy
    // once per view and document: after that the code a drag runs stays compiled, and a rerun need not pay again
    if (view.warm && !warmed.has(view)) {
      warmed.add(view);
      (window.requestIdleCallback || setTimeout)(() => {
        if (state.mount && state.mount.view === view) view.warm(readyContext(state.mount));
      });
    }
  };

  // Calls `ask` once a Plotly figure has painted (two frames after it is in the page), or after a few seconds
  // whatever happens, so that figures held back for the first one (ui/first_paint.py) never wait for good.
  const afterFirstPaint = (ask) => {
    let asked = false;
    const painted = () => document.querySelector(".js-plotly-plot .main-svg");
    const once = () => {
      if (asked) return;
      asked = true;
      observer.disconnect();
      clearTimeout(timer);
      requestAnimationFrame(() => requestAnimationFrame(ask));
    };
    const observer = new MutationObserver(() => { if (painted()) once(); });
    const timer = setTimeout(once, 5000);
    if (painted()) once();
    else observer.observe(document.body, { childList: true, subtree: true });
  };

  return { mount, state, readers, afterFirstPaint };
})();

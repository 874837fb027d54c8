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
      return button ? byLabel(spec, button.innerText.trim()) : undefined;
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
  const onScreen = (element) => {
    const box = element.getBoundingClientRect();
    return box.bottom > 0 && box.top < window.innerHeight && box.height > 0;
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
  // Rewrite a category heatmap's tick labels in the SVG when only their words changed (as many rows and columns,
  // every category drawn as one tick): true if done. Plotly itself relabels it once the controls rest.
  const relabel = (gd, full, cells, xa, ya) => {
    const z = full.z;
    if (!z || z.length !== cells.z.length || !z[0] || z[0].length !== cells.z[0].length) return false;
    const axes = [[xa, cells.x], [ya, cells.y]].filter(([, labels]) => labels);
    const texts = axes.map(([axis]) => [...gd.querySelectorAll(`.${axis._id}tick text`)]);
    if (axes.some(([, labels], i) => texts[i].length !== labels.length)) return false;
    // Plotly draws a category axis's ticks in category order, whichever way the axis runs
    axes.forEach(([, labels], i) => texts[i].forEach((text, j) => { text.textContent = String(labels[j]); }));
    return true;
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
      overlay = { gd, canvas, table: colourTable(full.colorscale), reversed: ya.autorange === "reversed", ranges: "" };
      overlays.set(key, overlay);
    }
    const { z, x, y, zmin, zmax } = cells;
    const numeric = (v) => !v || Array.from(v).every((e) => typeof e === "number");
    // the same cells under other words (a word typed letter by letter): its tick labels are rewritten in place
    const relabelled =
      !overlay.parked && !sameShape(full, cells) && !(numeric(x) && numeric(y)) && relabel(gd, full, cells, xa, ya);
    if (!relabelled && !overlay.parked && !sameShape(full, cells) && !(numeric(x) && numeric(y))) {
      overlay.canvas.remove(); // category labels changed (other words): Plotly draws it, once
      overlays.delete(key);
      const update = { z: [z] };
      if (x) update.x = [x];
      if (y) update.y = [y];
      window.Plotly.restyle(gd, update, [trace]);
      return;
    }
    if (!relabelled && !overlay.parked && !sameShape(full, cells)) {
      // the axes must move: Plotly keeps a one-cell stand-in from now on, so moving them stays cheap
      overlay.parked = true;
      window.Plotly.restyle(gd, { z: [[[zmin]]], x: [[x[0]]], y: [[y[0]]] }, [trace]);
    }
    if (overlay.parked) {
      const ranges = {
        [`${xa._name}.range`]: axisRange(x, false),
        [`${ya._name}.range`]: axisRange(y, overlay.reversed),
      };
      const rangeKey = JSON.stringify(ranges);
      if (rangeKey !== overlay.ranges) window.Plotly.relayout(gd, ranges);
      overlay.ranges = rangeKey;
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
      if (overlay.parked) {
        window.Plotly.relayout(gd, {
          [`${xa._name}.autorange`]: true,
          [`${ya._name}.autorange`]: overlay.reversed ? "reversed" : true,
        });
      }
      const update = { z: [z], zmin: [zmin], zmax: [zmax] };
      if (x) update.x = [x];
      if (y) update.y = [y];
      window.Plotly.restyle(gd, update, [trace]);
    };
  };
  // Lines, markers and bars while a control moves: when only their numbers change and their axes stay put, the
  // points are written straight into the SVG Plotly drew (a path's d, a marker's position, a bar's top), which
  // costs a millisecond where Plotly's restyle costs tens; the real restyle follows once the controls rest.
  const touched = new Map(); // figure name -> the exact restyle to run at rest
  const traceElement = (gd, index) =>
    [...gd.querySelectorAll("g.trace")].find((el) => el.__data__ && el.__data__[0] && el.__data__[0].trace && el.__data__[0].trace.index === index);
  const withinAxis = (axis, values) => {
    if (axis.autorange === false || axis.autorange === undefined) return true;
    const [low, high] = [Math.min(...axis.range), Math.max(...axis.range)];
    const linear = values.map((v) => axis.c2l(v));
    return linear.every((v) => v >= low && v <= high);
  };
  const directRestyle = (name, gd, update, traces) => {
    if (!state.interacting || Object.keys(update).some((k) => !["x", "y", "name", "text", "mode", "customdata"].includes(k))) return false;
    const indices = traces || gd._fullData.map((_, i) => i);
    const plans = [];
    for (const [j, index] of indices.entries()) {
      const full = gd._fullData[index];
      if (!full || !["scatter", "bar"].includes(full.type) || full.visible !== true) return false;
      if (update.mode && update.mode[j] !== undefined && update.mode[j] !== full.mode) return false;
      const x = update.x ? Array.from(update.x[j]) : Array.from(full.x || []);
      const y = update.y ? Array.from(update.y[j]) : Array.from(full.y || []);
      const xa = gd._fullLayout[(full.xaxis || "x").replace("x", "xaxis")];
      const ya = gd._fullLayout[(full.yaxis || "y").replace("y", "yaxis")];
      // a line alone may change its number of points (its path is rewritten whole); markers and bars may not
      const linesOnly = full.type === "scatter" && full.mode === "lines";
      if (x.length !== y.length || (!linesOnly && x.length !== full._length)) return false;
      if (!withinAxis(xa, x) || !withinAxis(ya, y)) return false;
      const element = traceElement(gd, index);
      if (!element) return false;
      plans.push({ full, x, y, xa, ya, element });
    }
    for (const { full, x, y, xa, ya, element } of plans) {
      const px = x.map((v) => xa.c2p(v));
      const py = y.map((v) => ya.c2p(v));
      if (full.type === "bar") {
        const base = ya.c2p(0);
        element.querySelectorAll("g.point > path").forEach((bar, i) => {
          const match = (bar.getAttribute("d") || "").match(/^M([\d.-]+),[\d.-]+V[\d.-]+H([\d.-]+)V/);
          if (match && Number.isFinite(py[i])) bar.setAttribute("d", `M${match[1]},${base}V${py[i]}H${match[2]}V${base}Z`);
        });
        continue;
      }
      const line = element.querySelector("path.js-line");
      if (line && (full.mode || "").includes("lines")) {
        line.setAttribute("d", px.map((v, i) => `${i ? "L" : "M"}${v.toFixed(2)},${py[i].toFixed(2)}`).join(""));
      }
      if ((full.mode || "").includes("markers")) {
        element.querySelectorAll("path.point").forEach((point, i) => {
          if (Number.isFinite(px[i]) && Number.isFinite(py[i])) point.setAttribute("transform", `translate(${px[i]},${py[i]})`);
        });
      }
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
    for (const [name, { gd, update, traces }] of [...touched]) {
      touched.delete(name);
      if (gd.isConnected) window.Plotly.restyle(gd, update, traces);
    }
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
    restyle: (name, traceUpdate, traces) =>
      apply(name, (gd) => {
        if (directRestyle(name, gd, traceUpdate, traces)) return;
        touched.delete(name); // Plotly draws it exactly now: an older direct update must not come back at rest
        window.Plotly.restyle(gd, traceUpdate, traces);
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
    relayout: (name, layoutUpdate) => apply(name, (gd) => window.Plotly.relayout(gd, layoutUpdate)),
    update: (name, traceUpdate, layoutUpdate, traces) =>
      apply(name, (gd) => {
        touched.delete(name);
        window.Plotly.update(gd, traceUpdate, layoutUpdate, traces);
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
      settleHeatmaps();
      settleDirect();
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

  const mount = (name, view, payload) => {
    install();
    state.pending.clear();
    if (!state.interacting) {
      settleHeatmaps();
      touched.clear(); // the server's rerun drew these figures exactly
    }
    // The server drew every figure for payload.values: the view starts from there.
    state.mount = { name, view, controls: payload.controls, data: payload, last: { ...payload.values }, held: {} };
    let tries = 0;
    const linkWhenDrawn = () => {
      link(state.mount);
      tries += 1;
      if (tries < 40) setTimeout(linkWhenDrawn, 250);
    };
    linkWhenDrawn();
    draw(); // a value the visitor moved while the server was busy
  };

  return { mount, state, readers };
})();

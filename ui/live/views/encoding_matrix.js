// Encoding matrix (pages/encoding_matrix.py): the overview and zoom heatmaps, one position's vector, the waves and
// the norms, redrawn from the kernels as the controls move; pointing at a position shows it in every figure.

const encodingMatrixView = (() => {
  const K = kernels;
  const ZOOM_KEYS = ["n", "d", "base", "layout", "zr", "zc"];
  const MATRIX_KEYS = ["n", "d", "base", "layout"];
  const touches = (changed, keys) => keys.some((k) => changed.has(k));
  const format = (x, digits) => x.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });

  const overview = (ctx, v) => {
    const [rowStride, colStride] = K.overviewStrides(v.n, v.d, ctx.data.overview_cells);
    const rows = K.range(0, v.n, rowStride);
    const cols = K.range(0, v.d, colStride);
    const z = K.sinusoidal(rows, cols, v.d, v.base, v.layout);
    ctx.heatmap("encoding_overview", { z, x: cols, y: rows, zmin: -1, zmax: 1 });
    ctx.title("encoding_overview", `PE, ${v.n} positions × d ${v.d}`);
  };
  const zoom = (ctx, v) => {
    const size = ctx.data.zoom;
    const firstRow = Math.min(v.zr, Math.max(0, v.n - size));
    const firstCol = Math.min(v.zc, Math.max(0, v.d - size));
    const rows = K.range(firstRow, Math.min(v.n, firstRow + size));
    const cols = K.range(firstCol, Math.min(v.d, firstCol + size));
    ctx.heatmap("encoding_zoom", { z: K.sinusoidal(rows, cols, v.d, v.base, v.layout), x: cols, y: rows, zmin: -1, zmax: 1 });
    ctx.title(
      "encoding_zoom",
      `Zoom: positions ${rows[0]}–${rows[rows.length - 1]}, dims ${cols[0]}–${cols[cols.length - 1]}`,
    );
  };
  const vector = (ctx, v, position, pointed) => {
    const cols = K.range(0, v.d);
    const [row] = K.sinusoidal([position], cols, v.d, v.base, v.layout);
    ctx.restyle("position_vector", { x: [cols], y: [row] }, [0]);
    ctx.title("position_vector", pointed ? `The full vector PE(${position}), pointed at` : `The full vector PE(${position})`);
  };
  const norms = (ctx, v, position) => {
    const n = K.wordPlusPosition(v.d, position, v.base);
    ctx.metrics("live_norms", [format(n.word_norm, 1), format(n.pe_norm, 2), format(n.integer_norm, 0)]);
  };
  // the waves: a true curve and its whole-position dots per chosen dimension (figures.dimension_waves)
  const waves = (ctx, v) => {
    const dims = ctx.data.dims;
    if (!dims.length) return;
    const count = Math.min((v.n - 1) * ctx.data.curve.per_position + 1, ctx.data.curve.max_points);
    const fine = Array.from({ length: count }, (_, i) => (count === 1 ? 0 : ((v.n - 1) * i) / (count - 1)));
    const dots = v.n <= ctx.data.dots_up_to ? K.range(0, v.n) : [];
    const usable = dims.map((dim) => dim < v.d);
    const safeDims = dims.map((dim) => Math.min(dim, v.d - 1));
    const plan = K.dimensionWavelengths(v.d, v.base, v.layout);
    const curves = sinusoidalColumns(fine, safeDims, v);
    const samples = sinusoidalColumns(dots, safeDims, v);
    const x = [], y = [], names = [];
    dims.forEach((dim, j) => {
      x.push(usable[j] ? fine : [], usable[j] ? dots : []);
      y.push(usable[j] ? curves.map((r) => r[j]) : [], usable[j] ? samples.map((r) => r[j]) : []);
      const kind = dim % 2 === 0 ? "sin" : "cos";
      names.push(`dim ${dim} (${kind}, λ ${toGeneral(plan[safeDims[j]], 4)})`, `dim ${dim} at whole positions`);
    });
    ctx.restyle("dimension_waves", { x, y, name: names });
  };
  // columns of the encoding at any real positions (core.explain.encodings.sinusoidal_curves)
  const sinusoidalColumns = (positions, dims, v) => {
    const omega = K.angularFrequencies(v.d, v.base);
    const nSin = Math.ceil(v.d / 2);
    const interleaved = dims.map((dim) => (v.layout === "concatenated" ? (dim < nSin ? 2 * dim : 2 * (dim - nSin) + 1) : dim));
    return positions.map((p) =>
      interleaved.map((col) => (col % 2 === 0 ? Math.sin(p * omega[col >> 1]) : Math.cos(p * omega[col >> 1]))),
    );
  };
  // Python's format(x, ".4g")
  const toGeneral = (x, digits) => {
    const text = Number(x.toPrecision(digits));
    return Math.abs(text) >= 10 ** digits || (Math.abs(text) < 1e-4 && text !== 0)
      ? x.toExponential(digits - 1).replace(/\.?0+e/, "e").replace(/e([+-])(\d)$/, "e$10$2")
      : String(text);
  };

  const highlight = (ctx, v, position) => {
    const row = (name) =>
      position === null ? [] : [{
        type: "rect", xref: "paper", yref: "y", x0: 0, x1: 1, y0: position - 0.5, y1: position + 0.5,
        line: { color: "#1f2a36", width: 2 }, fillcolor: "rgba(0,0,0,0)",
      }];
    ctx.relayout("encoding_overview", { shapes: row("encoding_overview") });
    ctx.relayout("encoding_zoom", { shapes: row("encoding_zoom") });
    ctx.relayout("dimension_waves", {
      shapes: position === null ? [] : [{
        type: "line", xref: "x", yref: "paper", x0: position, x1: position, y0: 0, y1: 1,
        line: { color: "#1f2a36", width: 1.5, dash: "dot" },
      }],
    });
  };

  return {
    redraw(ctx) {
      const v = { ...ctx.values };
      const position = Math.min(v.t, v.n - 1);
      if (touches(ctx.changed, MATRIX_KEYS)) {
        ctx.when("encoding_overview", () => overview(ctx, v));
        ctx.when("dimension_waves", () => waves(ctx, v));
      }
      if (touches(ctx.changed, ZOOM_KEYS)) ctx.when("encoding_zoom", () => zoom(ctx, v));
      if (touches(ctx.changed, [...MATRIX_KEYS, "t"])) {
        ctx.when("position_vector", () => {
          vector(ctx, v, position, false);
          norms(ctx, v, position);
        });
      }
    },
    pointers: {
      encoding_overview: (point) => point.y,
      encoding_zoom: (point) => point.y,
      dimension_waves: (point) => Math.round(point.x),
    },
    point(ctx, position) {
      const v = ctx.values;
      highlight(ctx, v, position);
      vector(ctx, v, position === null ? Math.min(v.t, v.n - 1) : Math.min(position, v.n - 1), position !== null);
    },
  };
})();

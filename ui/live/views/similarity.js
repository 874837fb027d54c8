// Similarity vs offset (pages/similarity.py): the curves from four starts and their closed form, the cosine
// heatmap, the rotation check, the other schemes and the curves past the trained length, redrawn from the kernels
// (the same numbers as core/explain/similarity.py) as the controls move. Pointing at a heatmap cell marks its
// offset on the curves; pointing at an offset on the curves marks its diagonal on the heatmap.

const similarityView = (() => {
  const K = kernels;
  const ROUNDING = 1e-9;
  const touches = (changed, keys) => keys.some((k) => changed.has(k));
  const once = (compute) => {
    let value;
    return () => (value === undefined ? (value = compute()) : value);
  };

  // core.explain.similarity.coincidence_note, in loops (a drag asks for it at every frame)
  const coincidenceNote = (curves, closedForm) => {
    let size = 1;
    for (const row of curves) for (const value of row) size = Math.max(size, Math.abs(value));
    if (curves.length < 2 || K.spreadAcrossStarts(curves) > ROUNDING * size) return "";
    const starts = `the ${curves.length} starts give one curve`;
    let gap = closedForm ? 0 : Infinity;
    if (closedForm) for (const row of curves) for (let j = 0; j < row.length; j += 1) gap = Math.max(gap, Math.abs(row[j] - closedForm[j]));
    return gap <= ROUNDING * size ? `${starts} and the closed form, equal up to rounding` : `${starts}, equal up to rounding`;
  };

  // one scheme's curves, matrix and closed form (core.explain.similarity.similarity_picture)
  // The curves and the heatmap are drawn apart (one may be off screen), so each is computed when first asked for.
  const picture = (scheme, v, starts, offsets, positions) => {
    if (scheme === "sinusoidal" || scheme === "learned (init)") {
      // a row of K.sinusoidal (interleaved: column 2i the sine, 2i+1 the cosine of p·ω_i), without its per-call
      // frequency table and column plan: a drag asks for thousands of rows. A whole position p = q + r (q a
      // multiple of STRIDE, r the rest) takes its sine and cosine from those of q and r by the angle-sum identities,
      // a few products where Math.sin and Math.cos cost far more; the two differ by a few units in the last place,
      // far inside the 1e-9 the browser tests hold these numbers to against core/.
      const omega = K.angularFrequencies(v.d, v.base);
      const STRIDE = 64;
      const angles = new Map(); // whole position -> [sines, cosines] of p·ω
      const trig = (p) => {
        let pair = angles.get(p);
        if (!pair) {
          pair = [new Float64Array(omega.length), new Float64Array(omega.length)];
          for (let i = 0; i < omega.length; i += 1) {
            pair[0][i] = Math.sin(p * omega[i]);
            pair[1][i] = Math.cos(p * omega[i]);
          }
          angles.set(p, pair);
        }
        return pair;
      };
      const sinusoidalRow = (p) => {
        const row = new Float64Array(v.d);
        if (!Number.isInteger(p) || p < 0) {
          for (let j = 0; j < v.d; j += 1) row[j] = j % 2 === 0 ? Math.sin(p * omega[j >> 1]) : Math.cos(p * omega[j >> 1]);
          return row;
        }
        const [sq, cq] = trig(p - (p % STRIDE));
        const [sr, cr] = trig(p % STRIDE);
        for (let j = 0; j < v.d; j += 1) {
          const i = j >> 1;
          row[j] = j % 2 === 0 ? sq[i] * cr[i] + cq[i] * sr[i] : cq[i] * cr[i] - sq[i] * sr[i];
        }
        return row;
      };
      const cache = new Map();
      const rowOf = (p) => {
        if (!cache.has(p)) cache.set(p, scheme === "sinusoidal" ? sinusoidalRow(p) : K.learnedTable([p], v.d)[0]);
        return cache.get(p);
      };
      // PE(s)·PE(p) for every offset of one start, without making the row of p: with p = q + r as above,
      // PE(s)·PE(p) = Σ_i cos(r·ω_i)·U_i + sin(r·ω_i)·W_i, where U_i = a_2i·sin(qω_i) + a_2i+1·cos(qω_i) and
      // W_i = a_2i·cos(qω_i) − a_2i+1·sin(qω_i) (a = PE(s)) hold for a whole block of STRIDE offsets: two products
      // a pair instead of six. Rounding differs from core's sums in the last places, far inside the 1e-9.
      const curveOf = (s) => {
        const a = rowOf(s);
        const half = omega.length;
        const u = new Float64Array(half);
        const w = new Float64Array(half);
        let block = -1;
        return offsets.map((k) => {
          const p = s + k;
          if (scheme !== "sinusoidal" || !Number.isInteger(p) || p < 0) return K.dot(a, rowOf(p));
          if (p - (p % STRIDE) !== block) {
            block = p - (p % STRIDE);
            const [sq, cq] = trig(block);
            for (let i = 0; i < half; i += 1) {
              u[i] = a[2 * i] * sq[i] + a[2 * i + 1] * cq[i];
              w[i] = a[2 * i] * cq[i] - a[2 * i + 1] * sq[i];
            }
          }
          const [sr, cr] = trig(p % STRIDE);
          let sum = 0;
          for (let i = 0; i < half; i += 1) sum += cr[i] * u[i] + sr[i] * w[i];
          return sum;
        });
      };
      // the closed form Σ cos(k·ω_i) (K.closedFormDotProduct), its cosines by the same angle sums
      const closedForm = (k) => {
        if (!Number.isInteger(k) || k < 0) return omega.reduce((sum, w) => sum + Math.cos(k * w), 0);
        const [sq, cq] = trig(k - (k % STRIDE));
        const [sr, cr] = trig(k % STRIDE);
        let sum = 0;
        for (let i = 0; i < omega.length; i += 1) sum += cq[i] * cr[i] - sq[i] * sr[i];
        return sum;
      };
      const curves = once(() => starts.map(curveOf));
      const matrix = once(() => K.cosineSimilarity(positions.map(rowOf)));
      return {
        get curves() { return curves(); },
        get matrix() { return matrix(); },
        closed: scheme === "sinusoidal" ? offsets.map(closedForm) : null,
      };
    }
    if (scheme === "RoPE") {
      const [q, k] = K.randomQueryKey(v.d, 0);
      const rq = (p) => K.applyRope(q, p, v.base);
      const rk = (p) => K.applyRope(k, p, v.base);
      const keys = positions.map(rk);
      return {
        curves: starts.map((s) => offsets.map((o) => K.dot(rq(s), rk(s + o)))),
        matrix: positions.map((m) => { const qm = rq(m); return keys.map((kn) => K.dot(qm, kn)); }),
        closed: K.ropeScoreClosedForm(q, k, offsets, K.angularFrequencies(v.d, v.base)),
      };
    }
    if (scheme === "ALiBi") {
      const slope = 2 ** -1; // head 1 of 8: 2^(-8·1/8)
      return {
        curves: starts.map(() => offsets.map((o) => -slope * o)),
        matrix: positions.map((m) => positions.map((n) => -slope * Math.abs(m - n))),
        closed: offsets.map((o) => -slope * o),
      };
    }
    // complex (Wang et al.): Re⟨f(t), f(t+k)⟩ = Σ_j r_j²·cos(k·ω_j), whatever t
    const word = K.randomComplexWord(Math.max(1, Math.floor(v.d / 2)), v.base, 0);
    const energy = word.amplitude.reduce((s, a) => s + a * a, 0);
    const score = (delta) => word.amplitude.reduce((s, a, j) => s + a * a * Math.cos(delta * word.frequency[j]), 0);
    return {
      curves: starts.map(() => offsets.map(score)),
      matrix: positions.map((m) => positions.map((n) => score(n - m) / energy)),
      closed: offsets.map(score),
    };
  };

  const drawCurves = (ctx, name, result, starts, offsets, title) => {
    const gd = ctx.graph(name);
    const closedName = gd && gd.data && gd.data[starts.length] ? gd.data[starts.length].name : "closed form";
    const traces = {
      x: [...starts.map(() => offsets), offsets],
      y: [...result.curves, result.closed || []],
      name: [...starts.map((s) => `t = ${s}`), closedName],
      // core.explain.figures.similarity.closed_form_mode
      mode: [...starts.map(() => "lines"), offsets.length <= 128 ? "markers" : "lines"],
    };
    const note = coincidenceNote(result.curves, result.closed);
    ctx.restyle(name, traces, K.range(0, starts.length + 1));
    ctx.title(name, note ? `${title}: ${note}` : title); // core.explain.figures.similarity.offset_curves
  };
  const drawMatrix = (ctx, name, matrix, positions) => {
    const limit = Math.max(...matrix.flat().map(Math.abs)) || 1;
    ctx.heatmap(name, { z: matrix, x: positions, y: positions, zmin: -limit, zmax: limit });
  };

  const beyond = (ctx, v, name) => {
    const far = K.range(0, v.train_len * v.scale + 1);
    const [q, k] = K.randomQueryKey(v.d, 0);
    const marks = {
      "shapes[0].x0": v.train_len, "shapes[0].x1": far[far.length - 1],
      "shapes[1].x0": v.train_len, "shapes[1].x1": v.train_len, "annotations[0].x": v.train_len,
    };
    const y = K.METHODS.map((m) =>
      name === "beyond_rope"
        ? K.ropeScoreClosedForm(q, k, far, K.scaledFrequencies(v.d, v.base, m, v.scale))
        : K.sinusoidalScore(far, v.d, v.base, m, v.scale));
    ctx.update(name, { x: K.METHODS.map(() => far), y }, marks);
  };

  const CURVE_KEYS = ["d", "base", "n", "kmax"];
  return {
    // Once the page rests: the curves and the rotation check for the values shown, results unused, so that the code
    // a drag runs is already compiled (its first redraw otherwise ran several times slower).
    warm(ctx) {
      const v = ctx.values;
      const offsets = K.range(0, v.kmax + 1);
      const positions = K.range(0, v.n, K.heatmapStride(v.n, ctx.data.max_side));
      const sinusoidal = picture("sinusoidal", v, K.curveStarts(v.n), offsets, positions);
      coincidenceNote(sinusoidal.curves, sinusoidal.closed);
      K.shiftCheck(v.t, v.k, v.d, v.base);
    },
    redraw(ctx) {
      const v = ctx.values;
      const starts = K.curveStarts(v.n);
      const offsets = K.range(0, v.kmax + 1);
      const positions = K.range(0, v.n, K.heatmapStride(v.n, ctx.data.max_side));
      if (touches(ctx.changed, CURVE_KEYS)) {
        const sinusoidal = once(() => picture("sinusoidal", v, starts, offsets, positions));
        ctx.when("dot_product_vs_offset", () =>
          drawCurves(ctx, "dot_product_vs_offset", sinusoidal(), starts, offsets, `PE(t)·PE(t+k) from ${starts.length} starts`));
        ctx.when("cosine_similarity", () => drawMatrix(ctx, "cosine_similarity", sinusoidal().matrix, positions));
        const scheme = ctx.data.scheme;
        const other = once(() => picture(scheme, v, starts, offsets, positions));
        ctx.when("scheme_vs_offset", () =>
          drawCurves(ctx, "scheme_vs_offset", other(), starts, offsets, `${scheme}, from ${starts.length} starts`));
        ctx.when("scheme_matrix", () => drawMatrix(ctx, "scheme_matrix", other().matrix, positions));
      }
      if (touches(ctx.changed, ["d", "base", "t", "k"])) {
        const check = K.shiftCheck(v.t, v.k, v.d, v.base);
        const dims = K.range(0, v.d);
        ctx.restyle("shift_matrix_check", {
          x: [dims, dims, dims],
          y: [check.pe_start, check.pe_target, check.shifted],
          name: [`PE(${v.t})`, `PE(${v.t + v.k})`, `M_${v.k}·PE(${v.t})`],
        });
        ctx.title("shift_matrix_check", `One rotation carries PE(${v.t}) to PE(${v.t + v.k})`);
      }
      if (touches(ctx.changed, ["d", "base", "train_len", "scale"])) {
        ctx.when("beyond_rope", () => beyond(ctx, v, "beyond_rope"));
        ctx.when("beyond_sinusoidal", () => beyond(ctx, v, "beyond_sinusoidal"));
      }
    },
    pointers: {
      cosine_similarity: (point) => [point.y, point.x],
      dot_product_vs_offset: (point) => Math.round(point.x),
    },
    point(ctx, pointed, figure) {
      const v = ctx.values;
      if (pointed === null) {
        ctx.relayout("cosine_similarity", { shapes: [] });
        ctx.relayout("dot_product_vs_offset", { shapes: [] });
        return;
      }
      const offset = figure === "cosine_similarity" ? Math.abs(pointed[1] - pointed[0]) : pointed;
      ctx.relayout("dot_product_vs_offset", {
        shapes: [{ type: "line", xref: "x", yref: "paper", x0: offset, x1: offset, y0: 0, y1: 1, line: { color: "#1f2a36", width: 1.5, dash: "dot" } }],
      });
      const last = v.n - 1;
      const shapes = [{ type: "line", xref: "x", yref: "y", x0: offset, y0: 0, x1: last, y1: last - offset, line: { color: "#1f2a36", width: 2, dash: "dot" } }];
      if (figure === "cosine_similarity") {
        shapes.push({ type: "rect", xref: "paper", yref: "y", x0: 0, x1: 1, y0: pointed[0] - 0.5, y1: pointed[0] + 0.5, line: { color: "#1f2a36", width: 2 } });
      }
      ctx.relayout("cosine_similarity", { shapes });
    },
  };
})();

// Softmax saturation (pages/softmax_saturation.py): the marker of a on the saturation and Jacobian curves and the
// Jacobian's numbers, and the row of scores (weights, gradient, numbers) as d_k, the temperature or the typed
// scores change, from the kernels (core/explain/attention.py's numbers).

const softmaxSaturationView = (() => {
  const K = kernels;
  const touches = (changed, keys) => keys.some((k) => changed.has(k));
  // Python's f"{x:.3e}"
  const sci = (x) => x.toExponential(3).replace(/e([+-])(\d)$/, "e$10$2");
  const general = (x) => String(Number(x.toPrecision(6)));
  // pages/softmax_saturation.py's parse_scores: null where the page would show an error instead
  const parseScores = (text, most) => {
    const parts = String(text).replace(/,/g, " ").split(/\s+/).filter(Boolean);
    if (parts.length < 1 || parts.length > most) return null;
    const scores = parts.map(Number);
    if (scores.some((s) => !Number.isFinite(s) || Math.abs(s) > 1e6)) return null;
    return scores;
  };
  return {
    redraw(ctx) {
      const v = ctx.values;
      if (ctx.changed.has("a")) {
        const row = K.saturationRow(v.a);
        const name = `a = ${general(v.a)}`;
        ctx.when("softmax_saturation", () => ctx.restyle("softmax_saturation", { x: [[v.a, v.a]], name }, [2]));
        ctx.when("jacobian_collapse", () => ctx.restyle("jacobian_collapse", { x: [[v.a, v.a]], name }, [2]));
        ctx.metrics("live_jacobian", [sci(row.jacobian_max_abs), sci(row.jacobian_norm)]);
      }
      if (touches(ctx.changed, ["dk", "temp", "scores"])) {
        const scores = parseScores(v.scores, ctx.data.max_scores);
        if (!scores) return; // the server shows the error on Enter
        const row = K.softmaxRow(scores, v.dk, v.temp);
        const keys = K.range(0, scores.length);
        const limit = Math.max(...row.gradient.flat().map(Math.abs)) || 1;
        ctx.when("softmax_weights", () =>
          ctx.restyle(
            "softmax_weights",
            { x: [keys], y: [row.probabilities], text: [row.probabilities.map((p) => p.toFixed(3))] },
            [0],
          ));
        ctx.when("softmax_gradient", () =>
          ctx.heatmap("softmax_gradient", { z: row.gradient, x: keys, y: keys, zmin: -limit, zmax: limit }));
        ctx.metrics("live_row", [row.max_weight.toFixed(4), row.entropy.toFixed(4), sci(Math.max(...row.gradient.flat().map(Math.abs)))]);
      }
    },
  };
})();

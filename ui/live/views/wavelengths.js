// Wavelengths (pages/wavelengths.py): the wavelength per pair, its two ends and base·2π, and the three numbers
// under it, redrawn from the kernels as d_model or base moves.

const wavelengthsView = (() => {
  const K = kernels;
  const grouped = (x, digits) =>
    x.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
  return {
    redraw(ctx) {
      const { d, base } = ctx.values;
      const lengths = K.wavelengths(d, base);
      const pairs = K.range(0, lengths.length);
      const last = lengths.length - 1;
      const ceiling = base * 2 * Math.PI;
      const traces = {
        x: [pairs, [0, last], [0, last]],
        y: [lengths, [lengths[0], lengths[last]], [ceiling, ceiling]],
        customdata: [lengths.map((l) => 1 / l), null, null],
        text: [null, [`shortest ${grouped(lengths[0], 2)}`, `longest ${grouped(lengths[last], 0)}`], [`base·2π = ${grouped(ceiling, 0)}`, ""]],
        // core.explain.figures.encoding.wavelength_mode
        mode: [lengths.length <= 64 ? "lines+markers" : "lines", "markers+text", "lines+text"],
      };
      // the wavelength axis (log) ends a little above base·2π, as core.explain.figures.encoding draws it
      ctx.restyle("wavelengths", traces, undefined, ctx.changed.has("base") ? { yaxis: [0, Math.log10(ceiling) + 0.6] } : undefined);
      ctx.title("wavelengths", `Wavelengths, base ${grouped(base, 0)}, d ${d}`);
      ctx.metrics("live_wavelengths", [
        lengths[0].toFixed(4),
        grouped(lengths[last], 1),
        (lengths[last] / ceiling).toFixed(3),
      ]);
    },
  };
})();

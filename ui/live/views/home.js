// Home (pages/home.py): the order-blindness demo, computed in the browser as the words are typed, the shuffle number
// stepped or the encoding switched: the same layer, weights and word vectors as core/explain/order_demo.py.

const homeView = (() => {
  const K = kernels;
  const ROUNDING = 1e-9;
  // core.safe_text.plotly_literal: Plotly reads an HTML subset in labels, so visitor words are escaped
  const escape = (text) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  // core.explain.figures.home.demo_verdict
  const verdict = (largest) =>
    largest <= ROUNDING
      ? "Identical up to rounding: the same outputs, only in another order."
      : `Different: moving the words changes their outputs by up to ${largest.toFixed(2)}.`;
  const setStrong = (key, text) => {
    const root = document.querySelector(`.st-key-${key}`);
    const strong = root && root.querySelector("strong");
    const node = strong && strong.firstChild;
    if (node && node.nodeType === Node.TEXT_NODE && strong.childNodes.length === 1) node.data = text;
  };
  return {
    redraw(ctx) {
      const v = ctx.values;
      if (String(v.demo_tokens).length > ctx.data.max_chars) return; // the server refuses it on Enter
      const words = String(v.demo_tokens).split(/\s+/).filter(Boolean).slice(0, ctx.data.max_tokens);
      if (words.length < 2) return;
      let order = K.randomOrder(words.length, v.demo_seed);
      if (order.every((o, i) => o === i)) order = [order[order.length - 1], ...order.slice(0, -1)];
      const demo = K.shuffleDemo(words, order, v.demo_pe);
      const labels = words.map((w, i) => `${i}: ${escape(w)}`);
      const limit = Math.max(...demo.outputs.flat().map(Math.abs)) || 1;
      const columns = K.range(0, demo.outputs[0].length);
      ctx.when("shuffle_demo", () => {
        ctx.heatmap("shuffle_demo", { z: demo.outputs, x: columns, y: labels, zmin: -limit, zmax: limit }, 0);
        ctx.heatmap("shuffle_demo", { z: demo.shuffled_back, x: columns, y: labels, zmin: -limit, zmax: limit }, 1);
      });
      setStrong("live_shuffled", order.map((i) => words[i]).join(" "));
      setStrong("live_verdict", verdict(demo.largest_difference));
    },
  };
})();

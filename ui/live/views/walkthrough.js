// One sentence through attention (pages/walkthrough.py): every step's matrix for every scheme, both orders and
// the shuffle's difference come from the server (core.explain.walkthrough.walkthrough_data, computed by core/);
// this view only switches between them, at once, as the step, the toggles, the scheme or Previous / Next change.
// It draws a step as core.explain.figures.walkthrough.step_matrix does, from the labels that module gives.

const walkthroughView = (() => {
  const names = (data) => data.walk.steps.map((step) => step.name);
  const setText = (key, selector, text) => {
    const root = document.querySelector(`.st-key-${key}`);
    const element = root && root.querySelector(selector);
    if (element && element.childNodes.length === 1 && element.firstChild.nodeType === Node.TEXT_NODE) {
      element.firstChild.data = text;
    }
  };
  // the page's line "As typed: **words**" / "Shuffled: **words**"
  const setWords = (shuffled, words) => {
    const root = document.querySelector(".st-key-live_walk_words p");
    if (!root || !root.firstChild || root.firstChild.nodeType !== Node.TEXT_NODE) return;
    root.firstChild.data = `${shuffled ? "Shuffled" : "As typed"}: `;
    setText("live_walk_words", "strong", words.join(" "));
  };
  const cells = (matrix, step, labels) => {
    if (step.quantity === "one-hot") {
      return { text: [matrix.map((row) => row.map((v) => (v === 1 ? "1" : "")))], texttemplate: "%{text}" };
    }
    return { text: [null], texttemplate: matrix[0].length <= labels.numbers_up_to ? "%{z:.2f}" : "" };
  };
  const scale = (matrix, signed, labels, floor = 0) => {
    if (!signed) return { colorscale: [labels.unsigned_colorscale], zmin: 0, zmax: 1 };
    const limit = Math.max(floor, ...matrix.flat().map(Math.abs)) || 1;
    return { colorscale: [labels.signed_colorscale], zmin: -limit, zmax: limit };
  };

  // The figure's state at one step, scheme and order: Plotly.update's two arguments
  const stepState = (data, index, scheme, variant) => {
    const { walk, labels } = data;
    const step = walk.steps[index];
    const matrix = walk.shared[variant][step.name] || walk.schemes[scheme][variant][step.name];
    const rows = labels.rows[variant];
    const columns = { dimensions: matrix[0].map((_, j) => j), tokens: rows, vocabulary: labels.vocabulary }[step.columns];
    return [
      {
        z: [matrix], x: [columns], y: [rows], ...scale(matrix, step.signed, labels), ...cells(matrix, step, labels),
        "colorbar.title.text": step.quantity,
      },
      {
        "xaxis.title.text": labels.column_titles[step.columns],
        "yaxis.title.text": step.columns === "tokens" ? labels.row_titles.tokens : labels.row_titles.other,
        "xaxis.tickangle": step.columns === "dimensions" ? 0 : -45,
      },
    ];
  };
  // a state's name in the figure's states drawn ahead: the sentence (both orders) and where in the walk
  const stateKey = (data, index, scheme, variant) =>
    `${JSON.stringify(data.walk.words)}|${data.walk.steps[index].name}|${scheme}|${variant}`;
  const shown = (v) => ({ scheme: v.pe ? v.scheme : "none", variant: v.shuffle ? "shuffled" : "original" });

  const drawStep = (ctx, v) => {
    const { walk } = ctx.data;
    const index = Math.max(0, names(ctx.data).indexOf(v.step));
    const step = walk.steps[index];
    const { scheme, variant } = shown(v);
    const [traceUpdate, layoutUpdate] = stepState(ctx.data, index, scheme, variant);
    ctx.state("walkthrough_step", stateKey(ctx.data, index, scheme, variant), traceUpdate, layoutUpdate);
    ctx.title("walkthrough_step", `${step.title}, ${v.shuffle ? "shuffled" : "as typed"} (${scheme})`);
    setText("live_walk_heading", "h3 [data-heading-text]", `Step ${index + 1} of ${walk.steps.length}: ${step.title}`);
    setText("live_walk_sentence", "p", walk.schemes[scheme].sentences[step.name]);
    setWords(v.shuffle, walk.words[variant]);
    drawAhead(ctx, v, index);
  };
  // What the visitor can reach from here in one move, nearest first: the next and previous steps, the encoding
  // and the shuffle switched, then the other steps outward.
  const drawAhead = (ctx, v, index) => {
    const count = ctx.data.walk.steps.length;
    const { scheme, variant } = shown(v);
    const toggledScheme = v.pe ? "none" : v.scheme;
    const toggledVariant = v.shuffle ? "original" : "shuffled";
    const wanted = [[index + 1, scheme, variant], [index - 1, scheme, variant], [index, toggledScheme, variant], [index, scheme, toggledVariant]];
    for (let distance = 2; distance < count; distance += 1) wanted.push([index + distance, scheme, variant], [index - distance, scheme, variant]);
    const states = wanted
      .filter(([i]) => i >= 0 && i < count)
      .map(([i, s, o]) => [stateKey(ctx.data, i, s, o), ...stepState(ctx.data, i, s, o)]);
    ctx.ahead("walkthrough_step", states);
  };
  // the shuffle's difference and its verdict, where the page shows them (the shuffle was on when it last ran)
  const drawDifference = (ctx, v) => {
    const { walk, labels } = ctx.data;
    const scheme = walk.schemes[v.pe ? v.scheme : "none"];
    ctx.restyle("walkthrough_difference", { z: [scheme.difference], ...scale(scheme.difference, true, labels, labels.difference_floor) }, [0]);
    const verdict = document.querySelector(".st-key-live_walk_verdict p");
    const strong = verdict && verdict.querySelector("strong");
    const rest = strong && strong.nextSibling;
    if (!strong || !rest || rest.nodeType !== Node.TEXT_NODE || strong.childNodes.length !== 1) return;
    if (scheme.identical) {
      strong.firstChild.data = "Identical up to rounding.";
      rest.data = " The shuffled sentence's weights are the original's with rows and columns moved along with the " +
        "words: without a position signal the layer cannot tell the two orders apart.";
    } else {
      strong.firstChild.data = "Not just moved.";
      rest.data = " Put back in the typed order, the shuffled sentence's weights differ from the original's by up to " +
        `${scheme.largest_difference.toFixed(3)}: the position signal lets the layer see the new order.`;
    }
  };

  return {
    // once the server's figure is drawn: the states one move away, drawn ahead (true when done)
    ready(ctx) {
      const gd = ctx.graph("walkthrough_step");
      if (!gd || !gd._fullLayout) return false;
      drawAhead(ctx, ctx.values, Math.max(0, names(ctx.data).indexOf(ctx.values.step)));
      return true;
    },
    redraw(ctx) {
      const v = ctx.values;
      ctx.when("walkthrough_step", () => drawStep(ctx, v));
      if (ctx.changed.has("pe") || ctx.changed.has("scheme")) ctx.when("walkthrough_difference", () => drawDifference(ctx, v));
    },
    buttons: {
      previous: (v, data) => ({ step: names(data)[Math.max(0, names(data).indexOf(v.step) - 1)] }),
      next: (v, data) => ({ step: names(data)[Math.min(names(data).length - 1, names(data).indexOf(v.step) + 1)] }),
    },
  };
})();

// The explainer's numbers, computed in the browser while a control moves. Each function mirrors one in core/explain
// (named beside it); core/ stays the source of truth: tests/test_live_kernels.py runs these in Chromium on a grid
// of inputs and compares them with core/ to 1e-9. Matrices are arrays of rows, as Plotly's heatmaps take them.

const kernels = (() => {
  // --- core/explain/portable_random.py -----------------------------------------------------------------------
  const STREAM = {
    token: 1, queryWeights: 2, keyWeights: 3, valueWeights: 4, learnedTable: 5, word: 6,
    query: 7, key: 8, amplitude: 9, phase: 10, shuffle: 11,
  };
  const mix = (x) => {
    x = (x ^ (x >>> 16)) >>> 0;
    x = Math.imul(x, 0x7feb352d) >>> 0;
    x = (x ^ (x >>> 15)) >>> 0;
    x = Math.imul(x, 0x846ca68b) >>> 0;
    return (x ^ (x >>> 16)) >>> 0;
  };
  const hashKey = (seed, stream) => {
    const key = mix((seed ^ 0x9e3779b9) >>> 0);
    return mix((stream ^ key ^ 0x85ebca6b) >>> 0);
  };
  const hashed = (seed, stream, index) => mix(mix((index ^ hashKey(seed, stream)) >>> 0));
  const uniform = (seed, stream, index) => (hashed(seed, stream, index) + 0.5) / 4294967296;
  const normal = (seed, stream, index) =>
    Math.sqrt(-2 * Math.log(uniform(seed, stream, 2 * index))) * Math.cos(2 * Math.PI * uniform(seed, stream, 2 * index + 1));
  const normals = (seed, stream, count) => Array.from({ length: count }, (_, i) => normal(seed, stream, i));
  const truncatedNormal = (seed, stream, index, limit = 2) => {
    let value = normal(seed, 64 * stream, index);
    for (let attempt = 1; attempt < 16 && Math.abs(value) > limit; attempt += 1) {
      value = normal(seed, 64 * stream + attempt, index);
    }
    return Math.min(limit, Math.max(-limit, value));
  };
  const permutation = (n, seed, stream = STREAM.shuffle) => {
    const order = Array.from({ length: n }, (_, i) => i);
    for (let i = n - 1; i > 0; i -= 1) {
      const j = Math.floor(uniform(seed, stream, i) * (i + 1));
      [order[i], order[j]] = [order[j], order[i]];
    }
    return order;
  };
  const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k += 1) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const textSeed = (text) => {
    let crc = 0xffffffff;
    for (const byte of new TextEncoder().encode(text)) crc = CRC_TABLE[(crc ^ byte) & 0xff] ^ (crc >>> 8);
    return (crc ^ 0xffffffff) >>> 0;
  };

  // --- core/explain/encodings.py -----------------------------------------------------------------------------
  const MAX_D_MODEL = 4096;
  const angularFrequencies = (d, base) =>
    Array.from({ length: Math.ceil(d / 2) }, (_, i) => base ** ((-2 * i) / d));
  const wavelengths = (d, base) => angularFrequencies(d, base).map((w) => (2 * Math.PI) / w);
  // column j of the matrix: which pair's frequency it turns at, and whether it is a sine
  const columnPlan = (d, layout) => {
    const nSin = Math.ceil(d / 2);
    return Array.from({ length: d }, (_, j) =>
      layout === "concatenated" ? (j < nSin ? [j, true] : [j - nSin, false]) : [Math.floor(j / 2), j % 2 === 0],
    );
  };
  // sinusoidal(n, d, base, layout)[rows][:, cols] without building the whole matrix
  const sinusoidal = (rows, cols, d, base, layout = "interleaved") => {
    const omega = angularFrequencies(d, base);
    const plan = columnPlan(d, layout);
    return rows.map((p) =>
      cols.map((j) => {
        const [pair, isSine] = plan[j];
        const angle = p * omega[pair];
        return isSine ? Math.sin(angle) : Math.cos(angle);
      }),
    );
  };
  const range = (start, stop, step = 1) => {
    const out = [];
    for (let v = start; v < stop; v += step) out.push(v);
    return out;
  };
  const ceilDiv = (a, b) => Math.floor((a + b - 1) / b);
  const overviewStrides = (nRows, nCols, maxCells) => {
    if (nRows * nCols <= maxCells) return [1, 1];
    const scale = Math.sqrt((nRows * nCols) / maxCells);
    let rowStride = Math.max(1, Math.ceil(nRows / Math.max(1, nRows / scale)));
    let colStride = Math.max(1, Math.ceil(nCols / Math.max(1, nCols / scale)));
    while (ceilDiv(nRows, rowStride) * ceilDiv(nCols, colStride) > maxCells) {
      if (ceilDiv(nRows, rowStride) >= ceilDiv(nCols, colStride)) rowStride += 1;
      else colStride += 1;
    }
    return [rowStride, colStride];
  };
  const dimensionWavelengths = (d, base, layout = "interleaved") => {
    const lengths = wavelengths(d, base);
    return columnPlan(d, layout).map(([pair]) => lengths[pair]);
  };
  const norm = (v) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  const wordPlusPosition = (d, position, base, seed = 0) => {
    const word = Array.from({ length: d }, (_, j) => normal(seed, STREAM.word, j));
    const [pe] = sinusoidal([position], range(0, d), d, base);
    const wordEnergy = word.reduce((s, x) => s + x * x, 0);
    const peEnergy = pe.reduce((s, x) => s + x * x, 0);
    const integerEnergy = d * position * position;
    return {
      word_norm: Math.sqrt(wordEnergy), pe_norm: Math.sqrt(peEnergy), integer_norm: Math.sqrt(integerEnergy),
      pe_energy_share: peEnergy / (wordEnergy + peEnergy),
      integer_energy_share: integerEnergy / (wordEnergy + integerEnergy),
    };
  };
  const learnedTable = (rows, d, seed = 0) =>
    rows.map((p) => range(0, d).map((j) => 0.02 * truncatedNormal(seed, STREAM.learnedTable, p * MAX_D_MODEL + j)));
  const binaryCounterWaves = (nPositions, nBits, samplesPerPosition = 16) => {
    const positions = range(0, nPositions);
    const bits = positions.map((p) => range(0, nBits).map((b) => (p >> b) & 1));
    const count = (nPositions - 1) * samplesPerPosition + 1;
    const fine = Array.from({ length: count }, (_, i) => (count === 1 ? 0 : ((nPositions - 1) * i) / (count - 1)));
    const waves = fine.map((x) =>
      range(0, nBits).map((b) => {
        const period = 2 ** (b + 1);
        const centre = (1.5 * period) / 2 - 0.5;
        return Math.cos((2 * Math.PI * (x - centre)) / period);
      }),
    );
    return { positions, bits, fine, waves };
  };

  // --- core/explain/similarity.py ----------------------------------------------------------------------------
  const roundHalfEven = (x) => {
    const floor = Math.floor(x);
    const diff = x - floor;
    if (diff > 0.5) return floor + 1;
    if (diff < 0.5) return floor;
    return floor % 2 === 0 ? floor : floor + 1;
  };
  const curveStarts = (nPositions, count = 4) => {
    const values = Array.from({ length: count }, (_, i) =>
      roundHalfEven(count === 1 ? 0 : ((nPositions - 1) * i) / (count - 1)),
    );
    return [...new Set(values)].sort((a, b) => a - b);
  };
  // summed left to right, as reduce would (a loop: a drag asks for thousands of these)
  const dot = (a, b) => {
    let sum = 0;
    for (let i = 0; i < a.length; i += 1) sum += a[i] * b[i];
    return sum;
  };
  const dotProductCurves = (starts, offsets, d, base) => {
    const omega = angularFrequencies(d, base);
    // PE(t)·PE(t+k) summed pair by pair, as numpy's einsum over the interleaved columns
    return starts.map((t) =>
      offsets.map((k) => {
        let sum = 0;
        for (let j = 0; j < d; j += 1) {
          const w = omega[Math.floor(j / 2)];
          sum += j % 2 === 0 ? Math.sin(t * w) * Math.sin((t + k) * w) : Math.cos(t * w) * Math.cos((t + k) * w);
        }
        return sum;
      }),
    );
  };
  const closedFormDotProduct = (offsets, d, base) => {
    const omega = angularFrequencies(d, base);
    return offsets.map((k) => omega.reduce((s, w) => s + Math.cos(k * w), 0));
  };
  const cosineSimilarity = (rows) => {
    const units = rows.map((r) => {
      const n = norm(r);
      return r.map((x) => x / n);
    });
    return units.map((a) => units.map((b) => dot(a, b)));
  };
  const heatmapStride = (nPositions, maxSide) => ceilDiv(nPositions, maxSide);
  const spreadAcrossStarts = (curves) => {
    let worst = 0;
    for (let j = 0; j < curves[0].length; j += 1) {
      const column = curves.map((row) => row[j]);
      worst = Math.max(worst, Math.max(...column) - Math.min(...column));
    }
    return worst;
  };
  const shiftCheck = (start, offset, d, base) => {
    const omega = angularFrequencies(d, base);
    const cols = range(0, d);
    const [peStart, peTarget] = sinusoidal([start, start + offset], cols, d, base);
    const shifted = cols.map((j) => {
      const pair = Math.floor(j / 2);
      const c = Math.cos(offset * omega[pair]);
      const s = Math.sin(offset * omega[pair]);
      const [sinT, cosT] = [peStart[2 * pair], peStart[2 * pair + 1]];
      return j % 2 === 0 ? c * sinT + s * cosT : -s * sinT + c * cosT;
    });
    const maxError = Math.max(...shifted.map((v, j) => Math.abs(v - peTarget[j])));
    return { pe_start: peStart, shifted, pe_target: peTarget, max_error: maxError };
  };

  // --- core/explain/attention.py and relative_positions.py -----------------------------------------------------------------------------
  const softmax = (scores, temperature = 1) => {
    const logits = scores.map((s) => s / temperature);
    const top = Math.max(...logits);
    const exps = logits.map((l) => Math.exp(l - top));
    const total = exps.reduce((s, x) => s + x, 0);
    return exps.map((x) => x / total);
  };
  const jacobianFromOutputs = (y) =>
    y.map((yi, i) =>
      y.map((yj, j) => (i === j ? yi * y.reduce((s, yk, k) => (k === i ? s : s + yk), 0) : -yi * yj)),
    );
  const threeScore = (a) => softmax([a, a, 2 * a]);
  const saturationRow = (a) => {
    const y = threeScore(a);
    const jac = jacobianFromOutputs(y).flat();
    return {
      a, y1: y[0], y2: y[1], y3: y[2],
      jacobian_max_abs: Math.max(...jac.map(Math.abs)),
      jacobian_norm: Math.sqrt(jac.reduce((s, x) => s + x * x, 0)),
    };
  };
  const softmaxRow = (scores, dK, temperature) => {
    const scale = 1 / (temperature * Math.sqrt(dK));
    const logits = scores.map((s) => s * scale);
    const probabilities = softmax(logits);
    const gradient = jacobianFromOutputs(probabilities).map((row) => row.map((x) => x * scale));
    const entropy = -probabilities.reduce((s, p) => (p > 0 ? s + p * Math.log(p) : s), 0);
    return { logits, probabilities, gradient, entropy, max_weight: Math.max(...probabilities) };
  };
  const randomQueryKey = (d, seed = 0) => [normals(seed, STREAM.query, d), normals(seed, STREAM.key, d)];
  const applyRope = (vector, position, base) => {
    const omega = angularFrequencies(vector.length, base);
    const out = vector.slice();
    for (let i = 0; i < vector.length / 2; i += 1) {
      const c = Math.cos(position * omega[i]);
      const s = Math.sin(position * omega[i]);
      out[2 * i] = vector[2 * i] * c - vector[2 * i + 1] * s;
      out[2 * i + 1] = vector[2 * i] * s + vector[2 * i + 1] * c;
    }
    return out;
  };
  const ropeScoreClosedForm = (q, k, offsets, omega) =>
    offsets.map((delta) => {
      let sum = 0;
      for (let i = 0; i < omega.length; i += 1) {
        const inPhase = q[2 * i] * k[2 * i] + q[2 * i + 1] * k[2 * i + 1];
        const quadrature = q[2 * i + 1] * k[2 * i] - q[2 * i] * k[2 * i + 1];
        sum += inPhase * Math.cos(delta * omega[i]) + quadrature * Math.sin(delta * omega[i]);
      }
      return sum;
    });
  const randomComplexWord = (d, base, seed = 0) => ({
    amplitude: range(0, d).map((j) => uniform(seed, STREAM.amplitude, j)),
    frequency: angularFrequencies(2 * d, base),
    phase: range(0, d).map((j) => 2 * Math.PI * uniform(seed, STREAM.phase, j)),
  });

  // --- core/explain/extrapolation.py -------------------------------------------------------------------------
  const METHODS = ["plain extrapolation", "position interpolation", "NTK-aware scaling"];
  const scaledFrequencies = (d, base, method, scale) => {
    if (method === "position interpolation") return angularFrequencies(d, base).map((w) => w / scale);
    if (method === "NTK-aware scaling" && Math.ceil(d / 2) > 1) {
      return angularFrequencies(d, base * scale ** (d / (d - 2)));
    }
    return angularFrequencies(d, base);
  };
  const sinusoidalScore = (offsets, d, base, method, scale) => {
    const omega = scaledFrequencies(d, base, method, scale);
    return offsets.map((k) => omega.reduce((s, w) => s + Math.cos(k * w), 0));
  };

  // --- core/explain/order_demo.py ----------------------------------------------------------------------------
  const DEMO_WIDTH = 8;
  const WEIGHT_SEED = 7;
  const tokenVectors = (words, width = DEMO_WIDTH) =>
    words.map((w) => normals(textSeed(w), STREAM.token, width));
  const attentionWeights = (width = DEMO_WIDTH, seed = WEIGHT_SEED) =>
    [STREAM.queryWeights, STREAM.keyWeights, STREAM.valueWeights].map((stream) => {
      const cells = normals(seed, stream, width * width);
      return range(0, width).map((r) => cells.slice(r * width, (r + 1) * width).map((x) => x / Math.sqrt(width)));
    });
  const matmul = (a, b) => a.map((row) => b[0].map((_, j) => row.reduce((s, x, k) => s + x * b[k][j], 0)));
  const transpose = (m) => m[0].map((_, j) => m.map((row) => row[j]));
  const selfAttention = (x, weights = attentionWeights(x[0].length)) => {
    const [wq, wk, wv] = weights;
    const width = x[0].length;
    const scores = matmul(matmul(x, wq), transpose(matmul(x, wk))).map((row) => row.map((s) => s / Math.sqrt(width)));
    const attention = scores.map((row) => softmax(row));
    return matmul(attention, matmul(x, wv));
  };
  const shuffleDemo = (words, order, withPosition, peScale = 1) => {
    const x = tokenVectors(words);
    const width = x[0].length;
    const pe = sinusoidal(range(0, words.length), range(0, width), width, 10000);
    const add = (rows) => rows.map((row, i) => row.map((v, j) => v + (withPosition ? peScale * pe[i][j] : 0)));
    const weights = attentionWeights(width);
    const outputs = selfAttention(add(x), weights);
    const shuffled = selfAttention(add(order.map((i) => x[i])), weights);
    const back = new Array(words.length);
    order.forEach((wordIndex, place) => { back[wordIndex] = shuffled[place]; });
    let largest = 0;
    outputs.forEach((row, i) => row.forEach((v, j) => { largest = Math.max(largest, Math.abs(back[i][j] - v)); }));
    return { outputs, shuffled_back: back, largest_difference: largest };
  };
  const randomOrder = (n, seed) => permutation(n, seed);

  return {
    STREAM, hashed, uniform, normal, normals, truncatedNormal, permutation, textSeed,
    angularFrequencies, wavelengths, dimensionWavelengths, sinusoidal, overviewStrides, range, wordPlusPosition,
    learnedTable, binaryCounterWaves, roundHalfEven, curveStarts, dotProductCurves, closedFormDotProduct,
    cosineSimilarity, heatmapStride, spreadAcrossStarts, shiftCheck, softmax, jacobianFromOutputs, threeScore,
    saturationRow, softmaxRow, randomQueryKey, applyRope, ropeScoreClosedForm, randomComplexWord, METHODS,
    scaledFrequencies, sinusoidalScore, tokenVectors, attentionWeights, selfAttention, shuffleDemo, randomOrder,
    matmul, transpose, dot, norm,
  };
})();

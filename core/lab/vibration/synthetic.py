"""The built-in bearing data set: ten CWRU-like classes, physically modelled, generated in well under a second.

It is the Fault lab's default on a fresh machine and on the hosted app, so it has to be honest rather than
easy. Each fault class is a train of impacts at its fault rate on an SKF 6205-2RS (the CWRU drive-end
bearing), every impact ringing a structural resonance, with slip jitter between impacts and the load-zone
amplitude modulation of its fault type, on a background of shaft harmonics and noise. The overall level
(RMS) and impulsiveness (kurtosis) of each class follow the real 0 HP drive-end files, which are not
monotonic in fault size, so no class can be told apart by amplitude alone.

`fault_frequencies(rpm)` gives the characteristic frequencies in Hz; the page's markers use it too.
"""

from __future__ import annotations

import numpy as np
import scipy.signal
import scipy.stats

from core.lab.vibration.types import CLASS_NAMES, DataError, Recording

SAMPLE_RATE = 12_000.0
LOAD_RPM = {0: 1797.0, 1: 1772.0, 2: 1750.0, 3: 1730.0}  # CWRU nominal speed at each motor load in HP

# SKF 6205-2RS JEM, the drive-end bearing of the CWRU rig.
N_BALLS = 9
BALL_DIAMETER_IN = 0.3126
PITCH_DIAMETER_IN = 1.537

# Fault rates as multiples of the shaft speed, as published for this bearing (the rig's documentation).
# They follow from the geometry above with a 0 contact angle, e.g. BPFI = N/2 · (1 + d/D).
SHAFT_MULTIPLES = {"FTF": 0.39828, "BSF": 4.7135 / 2, "2xBSF": 4.7135, "BPFO": 3.5848, "BPFI": 5.4152}

# Which rate each fault location repeats at. A ball defect strikes both races once per ball spin: 2·BSF.
FAULT_RATE_OF_LOCATION = {"IR": "BPFI", "B": "2xBSF", "OR": "BPFO"}

# Drive-end RMS (g) and kurtosis of the real 0 HP files (97.mat read at 48 kHz, 105.mat, ...).
REAL_LEVELS_0HP: dict[str, tuple[float, float]] = {
    "normal": (0.071, 2.8),
    "IR007": (0.29, 5.4),
    "IR014": (0.20, 22.0),
    "IR021": (0.53, 7.4),
    "B007": (0.14, 3.0),
    "B014": (0.15, 17.8),
    "B021": (0.14, 8.5),
    "OR007": (0.67, 7.6),
    "OR014": (0.10, 3.1),
    "OR021": (0.58, 21.0),
}

# Spread (log-normal sigma) of impact strengths. High-kurtosis classes need rare strong impacts: with
# equal impacts a ringing train's kurtosis stays near 1.5 · period / decay time, below their real level.
IMPACT_SPREAD = {"IR": 0.5, "B": 0.7, "OR": 0.4}
N_SHAFT_HARMONICS = 5
BACKGROUND_KURTOSIS = 2.8  # the normal file's: shaft harmonics (kurtosis < 3) plus broadband noise (3)


def fault_frequencies(rpm: float) -> dict[str, float]:
    """Characteristic frequencies in Hz at `rpm`: shaft, FTF (cage), BSF, 2xBSF, BPFO, BPFI."""
    rpm = float(rpm)
    if not np.isfinite(rpm) or rpm <= 0:
        raise ValueError(f"rpm must be a positive number, got {rpm}")
    shaft_hz = rpm / 60.0
    return {"shaft": shaft_hz, **{name: multiple * shaft_hz for name, multiple in SHAFT_MULTIPLES.items()}}


def fault_location(label: str) -> str | None:
    """ "IR", "B" or "OR" for a fault class name (IR007, B014, OR021, ...), None for normal or unknown."""
    for location in ("IR", "OR", "B"):
        if label.startswith(location) and label[len(location) :].isdigit():
            return location
    return None


def characteristic_frequency(label: str, rpm: float) -> float | None:
    """The rate (Hz) at which a class's fault strikes: BPFI, 2xBSF or BPFO; None for normal or unknown labels."""
    location = fault_location(label)
    return None if location is None else fault_frequencies(rpm)[FAULT_RATE_OF_LOCATION[location]]


def synthetic_bearing_set(
    seed: int = 0,
    loads: tuple[int, ...] = (0,),
    duration_s: float = 10.0,
    classes: tuple[str, ...] = CLASS_NAMES,
) -> list[Recording]:
    """One 12 kHz drive-end `Recording` per class and load (0-3 HP), `duration_s` seconds each.

    Same seed, same data. Each recording draws its own rpm (within 0.3 % of nominal), resonance
    (3-3.5 kHz), damping (0.05-0.1), slip (1-2 %), phases and levels (RMS ±10 %, excess kurtosis ±15 %
    around the real 0 HP file of its class); a recording does not change when other loads are asked for.
    """
    if isinstance(loads, int):
        loads = (loads,)
    loads = tuple(loads)
    if not loads or any(load not in LOAD_RPM for load in loads):
        raise DataError(f"Synthetic loads must be motor loads in HP among 0, 1, 2, 3, got {loads!r}.")
    unknown = [label for label in classes if label not in CLASS_NAMES]
    if unknown or not classes:
        raise DataError(f"Synthetic classes must be among {', '.join(CLASS_NAMES)}; got {list(classes)!r}.")
    if not 0.1 <= float(duration_s) <= 600:
        raise DataError(f"duration_s must be between 0.1 and 600 seconds, got {duration_s}.")

    recordings = []
    for load in loads:
        for label in classes:
            # One stream per (seed, load, class): asking for more loads leaves the others unchanged.
            rng = np.random.default_rng([seed, load, CLASS_NAMES.index(label)])
            recordings.append(_synthetic_recording(label, load, float(duration_s), rng, seed))
    return recordings


def _synthetic_recording(label: str, load: int, duration_s: float, rng: np.random.Generator, seed: int) -> Recording:
    n_samples = round(duration_s * SAMPLE_RATE)
    rpm = LOAD_RPM[load] * (1 + rng.uniform(-0.003, 0.003))
    shaft_hz = rpm / 60.0
    real_rms, real_kurtosis = REAL_LEVELS_0HP[label]
    target_rms = real_rms * rng.uniform(0.9, 1.1)
    target_kurtosis = 3 + (real_kurtosis - 3) * rng.uniform(0.85, 1.15)

    meta = {
        "source": "synthetic",
        "file": f"synthetic/{label}_{load}HP",
        "seed": seed,
        "channel": "DE",
        "load_hp": load,
        "rpm": rpm,
        "resampling": None,
        "target_rms": target_rms,
        "target_kurtosis": target_kurtosis,
    }
    location = fault_location(label)
    if location is None:
        signal = _background(n_samples, shaft_hz, target_kurtosis, rng)
    else:
        background = _background(n_samples, shaft_hz, BACKGROUND_KURTOSIS, rng)
        fault_hz = fault_frequencies(rpm)[FAULT_RATE_OF_LOCATION[location]]
        resonance_hz = rng.uniform(3000, 3500)
        damping = rng.uniform(0.05, 0.1)
        slip = rng.uniform(0.01, 0.02)
        impacts = _impact_train(n_samples, fault_hz, shaft_hz, location, slip, rng)
        ringing = _ring(impacts, resonance_hz, damping)
        signal = _mix_to_kurtosis(ringing, background, target_kurtosis)
        meta.update(
            fault_hz=fault_hz,
            fault_rate=FAULT_RATE_OF_LOCATION[location],
            resonance_hz=resonance_hz,
            damping=damping,
            slip=slip,
        )
    signal = signal * (target_rms / np.sqrt(np.mean(signal**2)))
    return Recording(signal=signal, sample_rate=SAMPLE_RATE, label=label, meta=meta)


def _background(n_samples: int, shaft_hz: float, kurtosis: float, rng: np.random.Generator) -> np.ndarray:
    """Shaft harmonics (imbalance, misalignment) plus broadband noise, mixed to the given kurtosis."""
    shaft_angle = 2 * np.pi * shaft_hz * np.arange(n_samples) / SAMPLE_RATE
    harmonics = np.zeros(n_samples)
    for order in range(1, N_SHAFT_HARMONICS + 1):
        amplitude = rng.uniform(0.5, 1.5) / order
        harmonics += amplitude * np.sin(order * shaft_angle + rng.uniform(0, 2 * np.pi))
    noise = rng.standard_normal(n_samples)
    return _mix_to_kurtosis(harmonics, noise, kurtosis)


def _impact_train(
    n_samples: int,
    fault_hz: float,
    shaft_hz: float,
    location: str,
    slip: float,
    rng: np.random.Generator,
) -> np.ndarray:
    """Impulses at the fault rate, jittered by slip, weighted by the load zone; zeros elsewhere."""
    period_s = 1 / fault_hz
    n_impacts = int(n_samples / SAMPLE_RATE * fault_hz) + 2
    # Rolling elements slip, so successive impacts are not exactly periodic: 1-2 % jitter per interval.
    intervals_s = period_s * (1 + slip * rng.standard_normal(n_impacts))
    times_s = rng.uniform(0, period_s) + np.cumsum(intervals_s) - intervals_s[0]
    times_s = times_s[times_s < n_samples / SAMPLE_RATE]

    strengths = rng.lognormal(mean=0.0, sigma=IMPACT_SPREAD[location], size=times_s.size)
    # An inner-race defect turns with the shaft and a ball defect with the cage, in and out of the load
    # zone at the bottom of the bearing; an outer-race defect at 6:00 sits in it all the time.
    modulation_hz = {"IR": shaft_hz, "B": SHAFT_MULTIPLES["FTF"] * shaft_hz, "OR": 0.0}[location]
    if modulation_hz:
        depth = rng.uniform(0.5, 0.9)
        strengths *= 1 + depth * np.cos(2 * np.pi * modulation_hz * times_s + rng.uniform(0, 2 * np.pi))

    impulses = np.zeros(n_samples)
    np.add.at(impulses, np.minimum(np.rint(times_s * SAMPLE_RATE).astype(np.int64), n_samples - 1), strengths)
    return impulses


def _ring(impulses: np.ndarray, resonance_hz: float, damping: float) -> np.ndarray:
    """Each impulse rings the resonance: a damped sine r^n sin(n θ), by impulse invariance of a 2nd-order mode."""
    radius = np.exp(-damping * 2 * np.pi * resonance_hz / SAMPLE_RATE)
    theta = 2 * np.pi * resonance_hz * np.sqrt(1 - damping**2) / SAMPLE_RATE
    numerator = [0.0, radius * np.sin(theta)]
    denominator = [1.0, -2 * radius * np.cos(theta), radius**2]
    return scipy.signal.lfilter(numerator, denominator, impulses)


def _mix_to_kurtosis(part_a: np.ndarray, part_b: np.ndarray, kurtosis: float) -> np.ndarray:
    """part_a · w + part_b with the weight w that gives the mix the wanted kurtosis.

    For independent zero-mean parts, E[x^4] = w^4 E[a^4] + 6 w^2 E[a^2] E[b^2] + E[b^4], so the kurtosis
    E[x^4] / E[x^2]^2 = K is a quadratic in u = w^2; take its largest positive root. If K is out of reach,
    take the weight on a grid that comes closest.
    """
    a = part_a - part_a.mean()
    b = part_b - part_b.mean()
    a_squared, b_squared = a * a, b * b
    a2, a4 = np.mean(a_squared), np.mean(a_squared * a_squared)
    b2, b4 = np.mean(b_squared), np.mean(b_squared * b_squared)
    coefficients = [a4 - kurtosis * a2**2, (6 - 2 * kurtosis) * a2 * b2, b4 - kurtosis * b2**2]
    roots = np.roots(coefficients)
    positive = roots[(np.abs(roots.imag) < 1e-12) & (roots.real > 0)].real
    if positive.size:
        weight_squared = positive.max()
    else:
        grid = np.logspace(-6, 6, 241) * b2 / a2
        mixed_kurtosis = (grid**2 * a4 + 6 * grid * a2 * b2 + b4) / (grid * a2 + b2) ** 2
        weight_squared = grid[np.argmin(np.abs(mixed_kurtosis - kurtosis))]
    return np.sqrt(weight_squared) * a + b


def window_statistics(windows: np.ndarray) -> np.ndarray:
    """RMS, kurtosis and crest factor of each window: (n_windows, window) -> (n_windows, 3)."""
    windows = np.asarray(windows, dtype=np.float64)
    rms = np.sqrt(np.mean(windows**2, axis=1))
    kurtosis = scipy.stats.kurtosis(windows, axis=1, fisher=False)
    crest_factor = np.max(np.abs(windows), axis=1) / rms
    return np.column_stack([rms, kurtosis, crest_factor])


def statistics_baseline_accuracy(recordings: list[Recording], window: int = 1024, seed: int = 0) -> float:
    """Test accuracy of a logistic regression on per-window RMS, kurtosis and crest factor (time split).

    The realism yardstick of the synthetic set: on real CWRU 0 HP this three-number summary gets about
    80 %; a data set it separates perfectly is a toy, and a deep model's score on it means little.
    """
    # Imported here: the app generates the synthetic set on first page load and does not need sklearn for it.
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from core.lab.vibration.windows import make_windows

    windows = make_windows(recordings, window=window, windowing="time", windowing_seed=seed)
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000))
    model.fit(window_statistics(windows.x_train), windows.y_train)
    return float(model.score(window_statistics(windows.x_test), windows.y_test))

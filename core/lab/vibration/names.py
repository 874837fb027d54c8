"""What a column or file name says: a sensor (so the columns are channels of one recording) or a class (so
each column is a recording of its own), and the class a file name gives."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

# s1, a3, ch2, channel 4, sensor_1, acc_x, accel, x / y / z, DE / FE / BA, X105_DE_time, Horizontal_vibration
SENSOR = re.compile(
    r"(?:x\d+_)?(?:de|fe|ba)(?:_time)?|\w*_time|[xyz]|(?:s|a|ch|chan|channel|sensor|acc|accel|acceleration|vib|"
    r"vibration|accelerometer|mic|probe)[ _-]?[xyz0-9]*|acc(?:el)?[ _-]?\w+|(?:horizontal|vertical|axial)\w*|"
    r"bearing[ _-]?\d+[ _-]?[xyz0-9]*|[hv][ _-]?\d*",
    re.IGNORECASE,
)
# normal, healthy, IR007, OR021@6, B014, inner, outer race, ball fault, comb, broken tooth, ...
CLASS = re.compile(
    r"(?:normal|healthy|health|baseline|good|ok|fault\w*|faulty|damaged?|defect\w*|inner\w*|outer\w*|ball\w*|"
    r"cage\w*|roller\w*|comb\w*|crack\w*|broken\w*|chipped\w*|miss\w*|surface\w*|root\w*|wear\w*|unbalance\w*|"
    r"misalign\w*|loose\w*)(?:[ _-]?\w*)?|(?:ir|or|b)\d{3}(?:@\d+)?",
    re.IGNORECASE,
)
NAME_EXTENSIONS = (".csv", ".txt", ".tsv", ".dat", ".mat")  # only these count as extensions in a class name
FILE_NUMBER_PREFIX = re.compile(r"^x\d+_", re.IGNORECASE)  # CWRU's X105_ before DE_time


def looks_like_sensor(name: str) -> bool:
    """The name reads as a sensor or channel (s1, ch2, acc_x, DE_time, ...)."""
    return bool(SENSOR.fullmatch(name.strip()))


def looks_like_class(name: str) -> bool:
    """The name reads as a fault class (normal, IR007, outer race, ...) and not as a sensor."""
    return bool(CLASS.fullmatch(name.strip())) and not looks_like_sensor(name)


def columns_are(names: Sequence[str], has_header: bool) -> tuple[str, str]:
    """("channels" or "classes", why) for a table of several numeric columns with these names."""
    if not has_header:
        return "channels", "no header names the columns, so they are taken as sensors of one recording"
    if all(looks_like_sensor(name) for name in names):
        return "channels", f"the headers {', '.join(names)} name sensors"
    if any(looks_like_class(name) for name in names):
        return "classes", f"the headers {', '.join(names)} name classes"
    return "classes", f"the headers {', '.join(names)} name neither sensors nor known classes; taken as classes"


def class_from_name(name: str | None, up_to_digit: bool = False) -> str | None:
    """The class a file name gives: the name without a data extension ("IR007.csv" -> "IR007"); with
    `up_to_digit`, only its part before the first digit ("healthy_load50" -> "healthy_load"), unless it starts
    with a digit (a time stamp such as "2004.02.12.10.32.39" keeps its whole name)."""
    if not name or not name.strip():
        return None
    path = Path(name.strip())
    stem = path.stem if path.suffix.lower() in NAME_EXTENSIONS else path.name
    if up_to_digit and stem and not stem[0].isdigit():
        match = re.match(r"\D+", stem)
        prefix = match.group(0).rstrip(" _-.") if match else stem
        return prefix or stem
    return stem


def channel_key(name: str) -> str:
    """A channel name without a file-number prefix, for matching across files: X105_DE_time -> de_time."""
    return FILE_NUMBER_PREFIX.sub("", name.strip()).lower()

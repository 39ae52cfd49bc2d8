"""Reading robot-description XML (URDF, MJCF): every value goes through `XmlValues`, whose errors name the file,
the element (by its name, or by its index among same-tag siblings when unnamed, inside its nearest named
ancestor), the attribute, the bad text and what was expected.

Magnitudes: any number whose magnitude exceeds `MAX_MAGNITUDE` (1e15) is refused. Lengths, masses, inertias,
forces, stiffnesses and velocities that large overflow float32 once squared or multiplied in the solver (float32
ends at 3.4e38), and no real robot needs them. Callers whose attribute uses a huge number to mean "unbounded"
(URDF `<limit lower upper>`, MJCF `range`) pass `limit=None` and handle it themselves; so do directions (axes,
quaternions), which `unit` normalises whatever their magnitude.
"""

from __future__ import annotations

import math
import os
import re
import warnings
import xml.etree.ElementTree as ET
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike

from ..description.validate import MAX_MAGNITUDE
from ..errors import ArticError


def read_xml_root(
    path: os.PathLike | str, kind: str, tag: str | tuple[str, ...], error: type[ArticError]
) -> tuple[Path, ET.Element]:
    """(Path, root element) of an XML robot file, or `error` naming the file: not a path, missing, a folder,
    unreadable, empty, not XML, or with a top element other than `<tag>` (or one of the tags)."""
    if not isinstance(path, (str, os.PathLike)):
        raise error(f"{kind} file: expected a path (str or pathlib.Path), got {type(path).__name__}")
    try:
        path = Path(path)
        if path.is_dir():
            raise error(f"{kind} file '{path}' is a folder; give the path of the {kind} file inside it")
        data = path.read_bytes()
        try:
            root = ET.fromstring(data)
        except ET.ParseError as e:
            root = _read_as_tinyxml(data.decode("utf-8", errors="replace"), path, kind, e)
    except FileNotFoundError:
        raise error(f"{kind} file '{path}' not found") from None
    except ET.ParseError as e:
        empty = " (the file is empty)" if not data.strip() else ""
        raise error(f"{kind} file '{path}' is not valid XML{empty}: {e}") from None
    except (OSError, ValueError) as e:  # permission denied, a NUL byte in the name, ...
        raise error(f"{kind} file '{path}' cannot be read: {e}") from None
    tags = (tag,) if isinstance(tag, str) else tag
    if root.tag not in tags:
        expected = " or ".join(f"<{t}>" for t in tags)
        raise error(f"{kind} file '{path}': the top element is <{root.tag}>, expected {expected}")
    return path, root


# Two slips that XML forbids and TinyXML-2 (the parser of MuJoCo and of ROS's urdfdom) reads anyway, found in files
# as shipped (myo_sim's elbow and leg models): '--' inside a comment, and no space between two attributes
# (name="a"type="box"). Such a file is read with them repaired, and the repair is reported.
_COMMENT = re.compile(r"<!--(.*?)-->", re.S)
_GLUED_ATTRIBUTE = re.compile(r"""(=\s*(?:"[^"<]*"|'[^'<]*'))(?=[A-Za-z_:][-\w.:]*\s*=)""")


def _read_as_tinyxml(text: str, path: Path, kind: str, first: ET.ParseError) -> ET.Element:
    """The root of `text` once the slips TinyXML-2 accepts are repaired (a warning says which), or `first` raised
    again when the repaired text is still not XML."""
    repaired = _COMMENT.sub(lambda m: "<!--" + m.group(1).replace("--", "- -").rstrip("-") + " -->", text)
    slips = ["'--' inside a comment"] if repaired != text else []
    glued = _GLUED_ATTRIBUTE.sub(r"\1 ", repaired)
    if glued != repaired:
        slips.append("attributes not separated by a space")
    try:
        root = ET.fromstring(glued)
    except ET.ParseError:
        raise first from None
    warnings.warn(
        f"{kind} file '{path}' is not well-formed XML ({first}: {' and '.join(slips)}); read as MuJoCo's and "
        "urdfdom's parser (TinyXML-2) reads it. Repair the file to silence this warning.",
        stacklevel=3,
    )
    return root


class XmlValues:
    """Numbers, choices and names read from the elements of one parsed file, with errors that locate them."""

    def __init__(self, root: ET.Element, path: Path, kind: str, error: type[ArticError]):
        self.path, self.kind, self.error = path, kind, error
        self.reparent(root)

    def reparent(self, root: ET.Element) -> None:
        """Learn the tree again after elements were moved (MJCF frames expanded), so that errors locate them."""
        self._parent = {child: parent for parent in root.iter() for child in parent}

    def root_of(self, el: ET.Element) -> ET.Element:
        """The file's top element above `el` (as of the last `reparent`)."""
        while el in self._parent:
            el = self._parent[el]
        return el

    # -- locating -----------------------------------------------------------------------------------------------
    def describe(self, el: ET.Element) -> str:
        """`geom 'foot' in body 'leg'` for a named element (with its parent when that is named); `<origin> in joint
        'j'` or `<collision #1> in link 'a'` (index among the parent's children of that tag, when there are several)
        for an unnamed one, up to its nearest named ancestor."""
        name = el.get("name") or (el.get("class") if el.tag == "default" else None)
        parent = self._parent.get(el)
        if name:  # with its named parent, if any (a geom's body): names are unique, the parent helps find it
            parent_name = parent is not None and parent in self._parent and parent.get("name")
            return f"{el.tag} '{name}'" + (f" in {parent.tag} '{parent_name}'" if parent_name else "")
        if parent is None:
            return f"<{el.tag}>"
        same = [c for c in parent if c.tag == el.tag]
        label = f"<{el.tag} #{same.index(el)}>" if len(same) > 1 else f"<{el.tag}>"
        if parent in self._parent:  # stop below the file's top element
            label += f" in {self.describe(parent)}"
        return label

    def where(self, el: ET.Element) -> str:
        return f"{self.kind} file '{self.path}': {self.describe(el)}"

    def fail(self, el: ET.Element, message: str) -> ArticError:
        """The file's error class, naming the file and the element; `message` names the attribute and the fix."""
        return self.error(f"{self.where(el)}: {message}")

    @contextmanager
    def context(self, el: ET.Element) -> Iterator[None]:
        """Re-raise an ArticError from the description API (a shape's radius, a link's mass) as the file's error,
        prefixed with the element it came from."""
        try:
            yield
        except self.error:
            raise
        except ArticError as e:
            raise self.fail(el, str(e)) from None

    def _bad(self, el, attr, text, inherited, problem):
        src = " (inherited from its <default> class)" if inherited else ""
        return self.fail(el, f"attribute {attr}='{text}'{src} {problem}")

    # -- values -------------------------------------------------------------------------------------------------
    def numbers(
        self,
        el: ET.Element,
        attr: str,
        count: int | tuple[int, int],
        default: ArrayLike | None = None,
        text: str | None = None,
        limit: float | None = MAX_MAGNITUDE,
    ) -> np.ndarray:
        """The attribute's whitespace-separated numbers: `count` of them (an int, or (min, max)); finite and at most
        `limit` in magnitude. `text` overrides the element's own attribute (MJCF class defaults); a missing
        attribute gives `default`, or an error when `default` is None."""
        inherited = text is not None and el.get(attr) != text
        text = el.get(attr) if text is None else text
        lo, hi = (count, count) if isinstance(count, int) else count
        expected = (f"{lo}" if lo == hi else f"{lo} to {hi}") + (" finite number" if hi == 1 else " finite numbers")
        if text is None:
            if default is None:
                raise self.fail(el, f"attribute {attr} is missing; give {expected}")
            return np.array(default, dtype=float)
        try:
            v = np.array([float(t) for t in text.split()], dtype=float)
        except ValueError:
            raise self._bad(el, attr, text, inherited, f"is malformed: expected {expected}") from None
        if not lo <= len(v) <= hi:
            raise self._bad(el, attr, text, inherited, f"is malformed: it has {len(v)} number(s), expected {expected}")
        if not np.all(np.isfinite(v)):
            raise self._bad(el, attr, text, inherited, "is not finite; give finite numbers")
        if limit is not None and np.any(np.abs(v) > limit):
            raise self._bad(
                el,
                attr,
                text,
                inherited,
                f"exceeds {limit:.0e} in magnitude, which overflows float32 arithmetic in the solver; "
                "give a realistic value (SI units)",
            )
        return v

    def number(
        self,
        el: ET.Element,
        attr: str,
        default: float | None = None,
        text: str | None = None,
        minimum: float | None = None,
        limit: float | None = MAX_MAGNITUDE,
    ) -> float:
        """One number (see `numbers`), at least `minimum` when given."""
        v = float(self.numbers(el, attr, 1, None if default is None else (default,), text, limit)[0])
        if minimum is not None and v < minimum:
            shown = el.get(attr) if text is None else text
            raise self._bad(el, attr, shown, text is not None and el.get(attr) != text, f"must be >= {minimum}")
        return v

    def integer(self, el: ET.Element, attr: str, text: str, lo: int, hi: int) -> int:
        """An integer in [lo, hi] (MJCF contype/conaffinity bit masks)."""
        inherited = el.get(attr) != text
        try:
            v = int(text)
        except ValueError:
            raise self._bad(el, attr, text, inherited, f"is not an integer (expected one in [{lo}, {hi}])") from None
        if not lo <= v <= hi:
            raise self._bad(el, attr, text, inherited, f"is outside [{lo}, {hi}]")
        return v

    def choice(self, el: ET.Element, attr: str, text: str, options: Collection[str]) -> str:
        if text not in options:
            raise self._bad(el, attr, text, el.get(attr) != text, f"is not one of {', '.join(options)}")
        return text

    def unit(self, el: ET.Element, attr: str, v: np.ndarray, text: str | None = None) -> np.ndarray:
        """`v` normalised without overflow (scaled by its largest component first); zero is refused."""
        m = float(np.max(np.abs(v)))
        if m == 0.0:
            shown = el.get(attr) if text is None else text
            raise self._bad(
                el,
                attr,
                shown,
                text is not None and el.get(attr) != text,
                "is the zero vector; give a non-zero direction",
            )
        v = v / m
        return v / math.sqrt(float(np.dot(v, v)))

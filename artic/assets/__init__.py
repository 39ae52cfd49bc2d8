"""Models shipped with artic. `model_path(name)` finds one by name (e.g. 'arm6', 'ant'); `load_model` reads a
URDF or MJCF file as (articulation, static actors, gravity)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ValidationError

if TYPE_CHECKING:
    from ..description.actors import RigidStatic
    from ..description.articulation import Articulation

ASSETS = Path(__file__).parent


def shipped_models() -> list[str]:
    return sorted(p.stem for p in [*ASSETS.glob("*.urdf"), *ASSETS.glob("mjcf/*.xml")])


def model_path(name_or_path: str) -> Path:
    """A shipped model's URDF by name, or the given path if it is a file."""
    p = Path(name_or_path)
    if p.is_file():
        return p
    for cand in (ASSETS / f"{name_or_path}.urdf", ASSETS / "mjcf" / f"{name_or_path}.xml"):
        if cand.is_file():
            return cand
    raise ValidationError(
        f"model '{name_or_path}': no such file and no shipped model of that name "
        f"(shipped: {', '.join(shipped_models())})"
    )


def load_model(
    path: Path,
    fix_base: bool = True,
    package_dirs: os.PathLike | str | Iterable[os.PathLike | str] = (),
    repair_inertia: bool = False,
) -> tuple[Articulation, list[RigidStatic], tuple[float, float, float] | None]:
    """(articulation, static actors, gravity or None) of a URDF (fix_base, package_dirs and repair_inertia apply)
    or an MJCF file (its first body tree; the file decides whether the base floats)."""
    if path.suffix.lower() == ".xml":
        from ..io.mjcf.loader import load_mjcf

        model = load_mjcf(path)
        return model.articulations[0], model.statics, model.gravity
    from ..io.urdf import load_urdf

    return load_urdf(path, fix_base=fix_base, package_dirs=package_dirs, repair_inertia=repair_inertia), [], None

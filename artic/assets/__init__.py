"""Models shipped with artic. `model_path(name)` finds one by name (e.g. 'arm6', 'ant'); `load_model` reads a
URDF or MJCF file as (articulation, static actors, gravity)."""

from pathlib import Path

from ..errors import ValidationError

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


def load_model(path: Path, fix_base: bool = True, package_dirs=(), repair_inertia: bool = False):
    """(articulation, static actors, gravity or None) of a URDF (fix_base, package_dirs and repair_inertia apply)
    or an MJCF file (its first body tree; the file decides whether the base floats)."""
    if path.suffix.lower() == ".xml":
        from ..io.mjcf.loader import load_mjcf

        model = load_mjcf(path)
        return model.articulations[0], model.statics, model.gravity
    from ..io.urdf import load_urdf

    return load_urdf(path, fix_base=fix_base, package_dirs=package_dirs, repair_inertia=repair_inertia), [], None

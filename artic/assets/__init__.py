"""Models shipped with artic. `model_path(name)` finds one by name (e.g. 'arm6')."""

from pathlib import Path

from ..errors import ValidationError

ASSETS = Path(__file__).parent


def shipped_models() -> list[str]:
    return sorted(p.stem for p in ASSETS.glob("*.urdf"))


def model_path(name_or_path: str) -> Path:
    """A shipped model's URDF by name, or the given path if it is a file."""
    p = Path(name_or_path)
    if p.is_file():
        return p
    cand = ASSETS / f"{name_or_path}.urdf"
    if cand.is_file():
        return cand
    raise ValidationError(f"model '{name_or_path}': no such file and no shipped model of that name "
                          f"(shipped: {', '.join(shipped_models())})")

"""MJCF mocap bodies (`<body mocap="true">`): bodies the simulation never moves, placed by the user (MuJoCo's
data.mocap_pos and data.mocap_quat), to which robots are held by weld or connect equalities (gymnasium-robotics'
Fetch holds its gripper to one; a scene file's target marker is one).

In artic a mocap body is a kinematic `RigidDynamic` (its geoms, its mass, moved by nothing else: gravity and
contacts leave it where it is, it pushes what it meets as an infinite mass), kept in `MjcfModel.mocap_bodies` by
name, in the file's order (MuJoCo's mocap index). `MjcfModel.set_mocap(scene, name, pos, quat, envs)` puts it at
a new pose at once, at rest, and holds it there (its pose and its kinematic target), as MuJoCo's mocap_pos and
mocap_quat do between steps: the bodies welded to it then follow through the weld. A keyframe's `mpos`/`mquat`
place it the same way (keyframes.py).

As MuJoCo requires, a mocap body is a child of <worldbody> without joints (a joint is refused); artic also refuses
child bodies under it (MuJoCo allows them; none of the suites' models has one).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ...description.actors import RigidDynamic
from ...errors import ValidationError
from .options import apply_mujoco_defaults

if TYPE_CHECKING:
    import xml.etree.ElementTree as ET

    from ...sim.scene import Scene
    from .loader import MjcfModel, _Loader


def is_mocap(loader: _Loader, body: ET.Element) -> bool:
    """Whether `body` (a child of <worldbody>) has mocap="true" (its own attribute; MuJoCo has no class default)."""
    return loader.v.choice(body, "mocap", body.get("mocap", "false"), ("true", "false")) == "true"


def mocap_body(loader: _Loader, body: ET.Element) -> RigidDynamic:
    """The kinematic RigidDynamic of mocap body `body`, recorded under its name for equalities and excludes (its own
    weld group: it shares no filter with any other body)."""
    v = loader.v
    name = body.get("name", f"mocap{len(loader.model.mocap_bodies)}")
    cls = loader._class(body, "childclass", "main")
    if any(el.tag in ("joint", "freejoint") for el in body):
        raise v.fail(body, "is a mocap body with a joint; MuJoCo's mocap bodies have none (remove the joint)")
    if body.find("body") is not None:
        raise v.fail(
            body,
            "is a mocap body with child bodies, which artic does not support; weld the children to it with an "
            "<equality><weld> instead",
        )
    with v.context(body):
        rigid = RigidDynamic(loader._frame(body, loader._attrs(body, cls)), name)
        rigid.kinematic = True
        loader._fill_link(rigid.link, body, cls)
    # MuJoCo's defaults as on every other body: no sleeping (a block that never sleeps can share a launch:
    # sim/grouping.py), the file's iterations, no velocity caps, and no contacts under <flag contact="disable">
    apply_mujoco_defaults(rigid.articulation, loader.opts)
    loader._record(body, rigid.articulation, rigid.link, -2, -1, [])
    return rigid


def set_mocap(
    model: MjcfModel,
    scene: Scene,
    name: str,
    pos: ArrayLike | None = None,
    quat: ArrayLike | None = None,
    envs: ArrayLike | None = None,
) -> None:
    """Move mocap body `name` of `model` (added to `scene`) in `envs` (default: all) to `pos` ((3,) or (E', 3)) and
    `quat` (MuJoCo's order w, x, y, z; (4,) or (E', 4)); either may be left as it is. It gets there over the next
    step (a kinematic target)."""
    if name not in model.mocap_bodies:
        have = ", ".join(model.mocap_bodies) or "none"
        raise ValidationError(f"MJCF model '{model.name}': no mocap body named {name!r} (mocap bodies: {have})")
    body = model.mocap_bodies[name]
    poses = scene.get_actor_pose(body).astype(np.float64)  # (E, 7): px, py, pz, qx, qy, qz, qw
    rows = np.arange(scene.num_envs) if envs is None else np.asarray(envs, dtype=int).reshape(-1)
    if rows.size and (rows.min() < 0 or rows.max() >= scene.num_envs):
        raise ValidationError(f"mocap body '{name}': envs must be in [0, {scene.num_envs}), got {rows.tolist()}")
    for what, value, cols, count in (("pos", pos, slice(0, 3), 3), ("quat", quat, slice(3, 7), 4)):
        if value is None:
            continue
        a = np.asarray(value, dtype=float)
        if a.shape not in ((count,), (len(rows), count)) or not np.all(np.isfinite(a)):
            raise ValidationError(
                f"mocap body '{name}': {what} must be {count} finite numbers or one row per env ({len(rows)}, "
                f"{count}), got shape {a.shape}"
            )
        if what == "quat":
            if np.any(np.linalg.norm(a, axis=-1) < 1e-6):
                raise ValidationError(f"mocap body '{name}': quat (w, x, y, z) must not be zero")
            a = a[..., [1, 2, 3, 0]] / np.linalg.norm(a, axis=-1, keepdims=True)  # w, x, y, z to x, y, z, w
        poses[rows, cols] = a
    scene.set_actor_pose(body, poses)
    scene.set_kinematic_target(body, poses)

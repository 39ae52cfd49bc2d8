"""Write a replay of a simulation as one self-contained HTML page (three.js inlined, no network when viewed).

The page gets a JSON description of the bodies (shapes in their link frames, colours, joint frames) and per-frame
link poses (and contacts, optional) as base64 float32 arrays; static/replay.js draws them. See docs/viewer.md.
"""

from __future__ import annotations

import base64
import colorsys
import json
import os
import re
from collections.abc import Iterable, Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ..description.actors import RigidDynamic, RigidStatic
from ..description.articulation import Articulation
from ..description.body_joints import JointBase
from ..description.shapes import Box, Capsule, ConvexMesh, Cylinder, Mesh, Plane, Sphere, TriangleMesh
from ..description.validate import MAX_MAGNITUDE
from ..errors import ValidationError

if TYPE_CHECKING:
    from ..sim.scene import Scene

STATIC_COLOR = "#9aa3ad"


def _b64(a, dtype) -> str:
    return base64.b64encode(np.ascontiguousarray(a, dtype=dtype).tobytes()).decode("ascii")


def _pose(t) -> dict:
    return {"p": [float(x) for x in t.p], "q": [float(x) for x in t.q]}


def _hull_triangles(points: np.ndarray, owner: str) -> tuple[np.ndarray, np.ndarray]:
    """Vertices and outward-facing triangles of the convex hull of points (how a ConvexMesh collides)."""
    from ..math.hull import _hull

    hull = _hull(points, owner)
    tris = hull.simplices.copy()
    a, b, c = (points[tris[:, k]] for k in range(3))
    # Qhull does not orient its facets; face them away from the centroid so that lighting and culling agree
    inward = np.einsum("ij,ij->i", np.cross(b - a, c - a), a - points.mean(axis=0)) < 0
    tris[inward] = tris[inward][:, ::-1]
    return points, tris


def _shape_json(shape, owner: str) -> dict | None:
    """The drawable geometry of a shape (None for a mesh whose file format artic does not read)."""
    out = {"pose": _pose(shape.local_pose), "name": shape.name}
    if isinstance(shape, Box):
        out.update(type="box", half_extents=[float(x) for x in shape.half_extents])
    elif isinstance(shape, Sphere):
        out.update(type="sphere", radius=float(shape.radius))
    elif isinstance(shape, (Capsule, Cylinder)):
        out.update(type=type(shape).__name__.lower(), radius=float(shape.radius), half_height=float(shape.half_height))
    elif isinstance(shape, Plane):
        out.update(type="plane")
    elif isinstance(shape, (Mesh, TriangleMesh)):
        if shape.vertices is None:
            return None
        out.update(type="mesh", vertices=_b64(shape.vertices, np.float32), triangles=_b64(shape.triangles, np.uint32))
    elif isinstance(shape, ConvexMesh):
        verts, tris = _hull_triangles(np.asarray(shape.hull_points, float), f"{owner} {shape.label()}")
        out.update(type="mesh", vertices=_b64(verts, np.float32), triangles=_b64(tris, np.uint32), flat=True)
    else:
        raise ValidationError(f"{owner}: the replay cannot draw a {type(shape).__name__} shape")
    return out


def _palette(n: int) -> list[str]:
    """n distinct colours: hues a golden-ratio step apart, so neighbouring links never look alike."""
    out = []
    for i in range(n):
        r, g, b = colorsys.hls_to_rgb((0.08 + 0.618034 * i) % 1.0, 0.55, 0.6)
        out.append(f"#{int(r * 255):02x}{int(g * 255):02x}{int(b * 255):02x}")
    return out


def _color(value, owner: str) -> str:
    if isinstance(value, str) and len(value) == 7 and value.startswith("#"):
        return value
    try:
        rgb = np.asarray(value, float)
    except (TypeError, ValueError):
        rgb = np.zeros(0)
    if rgb.shape not in ((3,), (4,)) or not np.all((rgb >= 0) & (rgb <= 1)):
        raise ValidationError(f"{owner}: colour must be '#rrggbb' or 3 (or 4) numbers in [0, 1], got {value!r}")
    return "#" + "".join(f"{round(float(x) * 255):02x}" for x in rgb[:3])


def _as_articulations(source) -> tuple[list[Articulation], list[RigidStatic], list[JointBase], str | None]:
    """(articulations, statics, body joints, the model's name if loaded from a file) from a model path, a Scene,
    or artic objects (one or a list)."""
    from ..sim.scene import Scene

    if isinstance(source, (str, Path)):
        from ..assets import load_model, model_path

        path = model_path(str(source))
        art, statics, _ = load_model(path)
        return [art], list(statics), [], path.stem
    if isinstance(source, Scene):
        return list(source.articulations), list(source.statics), list(source.joints), None
    items = list(source) if isinstance(source, (list, tuple)) else [source]
    arts, statics, joints = [], [], []
    for item in items:
        if isinstance(item, RigidDynamic):
            arts.append(item.articulation)
        elif isinstance(item, Articulation):
            arts.append(item)
        elif isinstance(item, RigidStatic):
            statics.append(item)
        elif isinstance(item, JointBase):
            joints.append(item)
        else:
            raise ValidationError(
                f"write_replay: the scene description takes a model path, a Scene, or artic "
                "Articulation/RigidDynamic/RigidStatic/body-joint objects, got "
                f"{type(item).__name__}"
            )
    if not arts:
        raise ValidationError("write_replay: the description holds no articulation or RigidDynamic to replay")
    return arts, statics, joints, None


def describe(
    arts: list[Articulation], statics: list[RigidStatic], joints: Iterable[JointBase] = (), colors: dict | None = None
) -> dict:
    """The page's description of the bodies: one entry per link (in scene.get_link_poses order, articulation after
    articulation), statics with their fixed poses, and joint frames: D on the parent link and C on the child for
    the articulations' joints, C on body A and D on body B (a link, a static actor or the world) for body joints
    (loop joints included)."""
    colors = dict(colors or {})
    bodies, frames, index = [], [], {}
    palette = _palette(sum(a.link_count for a in arts))
    for art in arts:
        links = art._topology().links
        index.update({id(link): len(bodies) + i for i, link in enumerate(links)})
        for link in links:
            owner = f"articulation '{art.name}' link '{link.name}'"
            color = _color(colors.pop(link.name), owner) if link.name in colors else palette[len(bodies)]
            shapes = [s for s in (_shape_json(sh, owner) for sh in link.shapes) if s is not None]
            bodies.append({"name": link.name, "articulation": art.name, "color": color, "shapes": shapes})
            joint = link.inbound_joint
            if joint is not None:
                frames.append(
                    {"body": index[id(link.parent)], "kind": "D", "joint": joint.name, "pose": _pose(joint.parent_pose)}
                )
                frames.append(
                    {"body": index[id(link)], "kind": "C", "joint": joint.name, "pose": _pose(joint.child_pose)}
                )
    if colors:
        raise ValidationError(
            f"write_replay colors: no link named {sorted(colors)} (links: {', '.join(b['name'] for b in bodies)})"
        )
    for joint in joints:
        frames.append(
            {
                **_attachment(joint.body_a, index, statics, joint),
                "kind": "C",
                "joint": joint.name,
                "pose": _pose(joint.frame_ca),
            }
        )
        frames.append(
            {
                **_attachment(joint.body_b, index, statics, joint),
                "kind": "D",
                "joint": joint.name,
                "pose": _pose(joint.frame_db),
            }
        )
    static_json = [
        {
            "name": s.name,
            "pose": _pose(s.pose),
            "color": STATIC_COLOR,
            "shapes": [j for j in (_shape_json(sh, f"static actor '{s.name}'") for sh in s.shapes) if j],
        }
        for s in statics
    ]
    return {"bodies": bodies, "statics": static_json, "frames": frames}


def _attachment(body, index: dict, statics: list, joint) -> dict:
    """Where a body joint's frame hangs in the page: a body (link), a static actor, or the world."""
    if body is None:
        return {"world": True}
    if isinstance(body, RigidStatic):
        if body not in statics:
            raise ValidationError(
                f"write_replay: body joint '{joint.name}' is attached to static actor "
                f"'{body.name}', which is not in the replay; add it to the description"
            )
        return {"static": statics.index(body)}
    link = body.link if isinstance(body, RigidDynamic) else body
    if id(link) not in index:
        raise ValidationError(
            f"write_replay: body joint '{joint.name}' is attached to '{link.name}', which is not in "
            "the replay; add its articulation or body to the description"
        )
    return {"body": index[id(link)]}


def _poses_array(link_poses, arts: list[Articulation], env: int) -> np.ndarray:
    """(T, B, 7) float32 of all bodies from (T, L, 7) or (T, E, L, 7) per articulation (or one array for one)."""
    # several articulations: one array each; one articulation: its array (or a one-element list of it)
    one_listed = (
        len(arts) == 1
        and isinstance(link_poses, (list, tuple))
        and len(link_poses) == 1
        and np.ndim(link_poses[0]) >= 3
    )
    per_art = link_poses if len(arts) > 1 or one_listed else [link_poses]
    if len(per_art) != len(arts):
        raise ValidationError(
            f"write_replay: {len(per_art)} link-pose arrays for {len(arts)} articulations "
            f"({', '.join(a.name for a in arts)}); give one per articulation"
        )
    out = []
    for art, poses in zip(arts, per_art, strict=True):
        try:
            a = np.asarray(poses, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValidationError(f"write_replay: link poses of '{art.name}' must be a numeric array") from None
        if a.ndim == 4:
            if not 0 <= env < a.shape[1]:
                raise ValidationError(
                    f"write_replay: env {env} is out of range for '{art.name}''s link poses with {a.shape[1]} envs"
                )
            a = a[:, env]
        if a.ndim != 3 or a.shape[1:] != (art.link_count, 7) or len(a) == 0:
            raise ValidationError(
                f"write_replay: link poses of '{art.name}' must be (frames, {art.link_count}, 7) "
                f"or (frames, envs, {art.link_count}, 7) (px, py, pz, qx, qy, qz, qw per link), "
                f"got shape {a.shape}"
            )
        out.append(a)
    if len({len(a) for a in out}) != 1:
        raise ValidationError(
            f"write_replay: the articulations' link poses have different frame counts {[len(a) for a in out]}"
        )
    poses = np.concatenate(out, axis=1)
    bad = ~np.isfinite(poses).all(axis=(1, 2))
    if bad.any():
        first = int(np.argmax(bad))
        raise ValidationError(
            f"write_replay: the link poses of frame {first} (and {int(bad.sum()) - 1} more) are "
            f"not finite; replay the frames before it (link_poses[:{first}])"
        )
    far = np.abs(poses[..., :3]).max(axis=(1, 2)) > MAX_MAGNITUDE  # float32 cannot place such a body
    if far.any():
        first = int(np.argmax(far))
        raise ValidationError(
            f"write_replay: the link positions of frame {first} reach {np.abs(poses[first, :, :3]).max():g} m, "
            f"beyond +-{MAX_MAGNITUDE:g} m; replay the frames before it (link_poses[:{first}])"
        )
    norm = np.linalg.norm(poses[..., 3:], axis=2)
    bad_q = np.abs(norm - 1.0) > 1e-3  # scene.get_link_poses gives unit quaternions; others are a slip
    if bad_q.any():
        f, b = (int(i) for i in np.argwhere(bad_q)[0])
        raise ValidationError(
            f"write_replay: the quaternion of body {b} in frame {f} has norm {norm[f, b]:.6g}, not 1; give poses "
            "as (px, py, pz, qx, qy, qz, qw) with unit quaternions (as scene.get_link_poses gives them)"
        )
    return poses.astype(np.float32)


def _arrows_json(entries, frames: int, what: str, keys: tuple) -> dict | None:
    """Per-frame arrows (contacts: points, normals, forces; joint forces: points, forces), each (N, 3) or None for
    none, as flat arrays and per-frame counts, with the typical force that sets the arrows' scale."""
    if entries is None:
        return None
    form = f"({', '.join(k + 's' for k in keys)})"
    if len(entries) != frames:
        raise ValidationError(
            f"write_replay: {len(entries)} {what} frames for {frames} pose frames; give one "
            f"{form} entry (or None) per frame"
        )
    counts, parts = [], {k: [] for k in keys}
    for k, frame in enumerate(entries):
        if frame is None:
            counts.append(0)
            continue
        try:
            arrays = [np.asarray(x, float).reshape(-1, 3) if np.size(x) else np.zeros((0, 3)) for x in frame]
        except (TypeError, ValueError):
            arrays = []
        if (
            len(arrays) != len(keys)
            or len({len(x) for x in arrays}) != 1
            or not all(np.isfinite(x).all() for x in arrays)
        ):
            raise ValidationError(
                f"write_replay: {what} of frame {k} must be finite {form}, each (N, 3) with the same N"
            )
        counts.append(len(arrays[0]))
        for key, arr in zip(keys, arrays, strict=True):
            parts[key].append(arr)
    cat = {k: (np.concatenate(v) if v else np.zeros((0, 3))) for k, v in parts.items()}
    norms = np.linalg.norm(cat["force"], axis=1)
    return {
        "counts": counts,
        **{k: _b64(v, np.float32) for k, v in cat.items()},
        "typical_force": float(np.percentile(norms[norms > 0], 90)) if (norms > 0).any() else 0.0,
    }


def _static_text(name: str) -> str:
    return resources.files("artic.viewer").joinpath("static", name).read_text(encoding="utf-8")


def write_replay(
    path: os.PathLike | str,
    source: str
    | Path
    | Scene
    | Articulation
    | RigidDynamic
    | RigidStatic
    | JointBase
    | list[Articulation | RigidDynamic | RigidStatic | JointBase]
    | tuple[Articulation | RigidDynamic | RigidStatic | JointBase, ...],
    link_poses: ArrayLike | Sequence[ArrayLike],
    dt: float,
    *,
    contacts: Sequence[tuple[ArrayLike, ArrayLike, ArrayLike] | None] | None = None,
    joint_forces: Sequence[tuple[ArrayLike, ArrayLike] | None] | None = None,
    env: int = 0,
    title: str | None = None,
    colors: dict | None = None,
) -> Path:
    """Write a self-contained HTML replay to `path` and return it.

    source: what is drawn: a model path or shipped model name (as `artic sim` takes), a Scene, or an
        Articulation / RigidDynamic / RigidStatic or a list of them.
    link_poses: per frame, the world poses (px, py, pz, qx, qy, qz, qw) of every link, as scene.get_link_poses
        gives them: (T, L, 7), or (T, E, L, 7) of which env `env` is shown; with several articulations, a list
        of such arrays, one per articulation in the source's order.
    dt: seconds between frames (the page plays in real time at speed 1).
    contacts: optional, per frame, (points, normals, forces) arrays (C, 3) or None (see Recorder).
    joint_forces: optional, per frame, (points, forces) arrays (J, 3) or None: body joints' constraint forces
        on body A at frame C's origin (see Recorder)
    colors: optional {link name: '#rrggbb' or (r, g, b) in [0, 1]}; other links get distinct colours."""
    if not (isinstance(dt, (int, float)) and np.isfinite(dt) and dt > 0):
        raise ValidationError(f"write_replay: dt must be a positive number of seconds, got {dt!r}")
    if not isinstance(path, (str, os.PathLike)):
        raise ValidationError(f"write_replay: path must be a file path (str or os.PathLike), got {path!r}")
    path = Path(path)
    if not path.resolve().parent.is_dir():
        raise ValidationError(f"write_replay: the folder of {path} does not exist")
    arts, statics, joints, model_name = _as_articulations(source)
    poses = _poses_array(link_poses, arts, env)
    data = describe(arts, statics, joints, colors)
    data.update(
        title=title or model_name or ", ".join(a.name for a in arts),
        dt=float(dt),
        frame_count=len(poses),
        poses=_b64(poses, np.float32),
        contacts=_arrows_json(contacts, len(poses), "contacts", ("point", "normal", "force")),
        joint_forces=_arrows_json(joint_forces, len(poses), "joint forces", ("point", "force")),
    )
    # '</' inside a script element would end it early; JSON allows the escaped form
    blob = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
    parts = {
        "ARTIC_TITLE": _html_escape(data["title"]),
        "THREE_JS": _static_text("three-orbit.min.js"),
        "ARTIC_DATA": blob,
        "REPLAY_JS": _static_text("replay.js"),
    }
    # one pass, so that nothing inserted (a link name, the library) is itself taken for a placeholder
    page = re.sub(
        r"/\*(ARTIC_TITLE|THREE_JS|ARTIC_DATA|REPLAY_JS)\*/", lambda m: parts[m.group(1)], _static_text("replay.html")
    )
    try:
        path.write_text(page, encoding="utf-8")
    except OSError as e:
        raise ValidationError(f"write_replay: cannot write {path} ({e.strerror})") from None
    return path


def _html_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class Recorder:
    """Records a scene for a replay: call `record()` after each `scene.step` (or at the frames you want), then
    `write(path)`. Keeps env `env`'s link poses of every articulation and body in the scene, their contacts
    (points, normals and the forces on the body) unless contacts=False, and each body joint's force on its body A
    (everything the joint applied over the step: constraints and drive) at its frame C."""

    def __init__(self, scene: Scene, env: int = 0, contacts: bool = True):
        if not 0 <= env < scene.num_envs:
            raise ValidationError(f"Recorder: env {env} is out of range for a scene of {scene.num_envs} envs")
        if not scene.articulations:
            raise ValidationError("Recorder: the scene has no articulation or RigidDynamic to record; add them first")
        self.scene, self.env, self.with_contacts = scene, env, contacts
        self.arts = list(scene.articulations)
        self.joints = list(scene.joints)
        self.poses: list[list[np.ndarray]] = [[] for _ in self.arts]
        self.contacts: list = []
        self.joint_forces: list = []

    def record(self) -> None:
        """Keep the current frame of env `env`: link poses, contacts (unless contacts=False) and body joints' forces."""
        if list(self.scene.articulations) != self.arts or list(self.scene.joints) != self.joints:
            raise ValidationError(
                "Recorder: articulations or joints were added to or removed from the scene after "
                "the recorder was made; make a new Recorder for the new scene"
            )
        for store, art in zip(self.poses, self.arts, strict=True):
            store.append(self.scene.get_link_poses(art)[self.env])
        if self.with_contacts:
            self.contacts.append(self._contacts())
        if self.joints:
            e = self.env
            points = [self.scene.get_joint_frames(j).c_world[e, :3] for j in self.joints]
            forces = [self.scene.get_joint_forces(j).wrench_a[e, :3] for j in self.joints]
            self.joint_forces.append((np.array(points), np.array(forces)))

    def _contacts(self):
        e, pts, nrm, frc = self.env, [], [], []
        for i, art in enumerate(self.arts):
            rep = self.scene.get_contacts(art)
            n = int(rep.count[e])
            # a contact between two articulations is in both reports; keep it once (from the lower index)
            keep = (rep.articulation_b[e, :n] < 0) | (rep.articulation_b[e, :n] >= i)
            pts.append(rep.point[e, :n][keep])
            nrm.append(rep.normal[e, :n][keep])
            frc.append(rep.force[e, :n][keep])
        return np.concatenate(pts), np.concatenate(nrm), np.concatenate(frc)

    def write(self, path: os.PathLike | str, dt: float, title: str | None = None, colors: dict | None = None) -> Path:
        """Write the recorded frames, `dt` seconds apart, as an HTML replay at `path` and return the path; `title` and
        `colors` as in write_replay."""
        if not self.poses[0]:
            raise ValidationError("Recorder.write: nothing recorded; call record() after each scene.step")
        poses = [np.stack(p) for p in self.poses]
        return write_replay(
            path,
            [*self.arts, *self.scene.statics, *self.scene.joints],
            poses,
            dt,
            contacts=self.contacts if self.with_contacts else None,
            joint_forces=self.joint_forces if self.joints else None,
            title=title,
            colors=colors,
        )

"""MJCF mass properties against MuJoCo itself: for every MJCF of Gymnasium's MuJoCo assets and dm_control's suite
that MuJoCo loads, artic's per-body mass, COM and inertia tensor (about the COM, body axes) equal MuJoCo's
compiled body_mass / body_ipos / body_iquat + body_inertia to 1e-6 relative, and so do the total mass and the dof
count. Plus small synthetic models for the compiler settings those files do not exercise.

Mapping (load_mjcf's docstring): bodies come in the same depth-first order in both; a MuJoCo body with k > 1
hinge/slide joints is k artic links of which the last holds its mass (the others carry a 1e-6 kg regularization);
a top-level body without a free joint hangs from an extra fixed "<name>_world" root link. A body MuJoCo leaves
massless gets artic's 1e-6 kg / 1e-9 kg m^2 regularization.
"""

import importlib.util
import warnings
from pathlib import Path

import mujoco
import numpy as np
import pytest

import artic
from artic.description.mjcf import MjcfError

REFUSED = {
    "dm_control/quadruped.xml": "geom 'terrain' has unsupported type 'hfield'",
}


def _mjcfs() -> list:
    out = []
    for package, folder in (("gymnasium", "envs/mujoco/assets"), ("dm_control", "suite")):
        spec = importlib.util.find_spec(package)
        if spec is not None:
            for p in sorted((Path(spec.origin).parent / folder).glob("*.xml")):
                out.append(pytest.param(f"{package}/{p.name}", p, id=f"{package}/{p.name}"))
    return out


def _rot(q_wxyz):
    m = np.zeros(9)
    mujoco.mju_quat2Mat(m, np.asarray(q_wxyz, dtype=float))
    return m.reshape(3, 3)


def _link_tensor(link):
    x, y, z, w = link.cmass_local_pose.q
    r = _rot([w, x, y, z])
    return r @ np.diag(link.inertia) @ r.T


def _body_links(mj, model):
    """{MuJoCo body id: the artic link holding its mass}, checking the link counts and names on the way."""
    links = [list(a.get_links()) for a in model.articulations]
    out, k, cursor = {}, -1, []
    for b in range(1, mj.nbody):
        top = mj.body_parentid[b] == 0
        if top:
            k += 1
            cursor = links[k]
            assert cursor, "an articulation without links"
            free = mj.body_jntnum[b] == 1 and mj.jnt_type[mj.body_jntadr[b]] == mujoco.mjtJoint.mjJNT_FREE
            if not free:
                assert cursor[0].name.endswith("_world")
                cursor.pop(0)
        n = 1 if mj.body_jntnum[b] == 0 else (1 if mj.jnt_type[mj.body_jntadr[b]] == mujoco.mjtJoint.mjJNT_FREE
                                             else mj.body_jntnum[b])
        assert len(cursor) >= n, f"artic has fewer links than MuJoCo's bodies need at body {b}"
        mine, cursor[:] = cursor[:n], cursor[n:]
        name = mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_BODY, b)
        if name:
            assert mine[-1].name == name
        out[b] = mine[-1]
    assert k == len(links) - 1 and not any(links), "artic has links MuJoCo does not"
    return out


def _compare(path, mj):
    """Assert artic's mass properties of the MJCF at `path` equal those of MuJoCo's compiled model `mj`."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = artic.load_mjcf(path)
    bodies = _body_links(mj, model)
    total = 0.0
    for b, link in bodies.items():
        where = f"body {b} '{mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_BODY, b)}'"
        mass = mj.body_mass[b]
        if mass == 0.0:
            assert link.mass == pytest.approx(1e-6) and max(link.inertia) <= 1e-9 * (1 + 1e-9), where
            continue
        total += link.mass
        assert link.mass == pytest.approx(mass, rel=1e-6), where
        ref = _rot(mj.body_iquat[b]) @ np.diag(mj.body_inertia[b]) @ _rot(mj.body_iquat[b]).T
        scale = np.abs(ref).max()
        np.testing.assert_allclose(_link_tensor(link), ref, rtol=0, atol=1e-6 * scale + 1e-15, err_msg=where)
        np.testing.assert_allclose(link.cmass_local_pose.p, mj.body_ipos[b], rtol=0,
                                   atol=1e-6 * max(1e-3, np.abs(mj.body_ipos[b]).max()), err_msg=where)
    assert total == pytest.approx(mj.body_mass[1:].sum(), rel=1e-6)
    dofs = sum(a.dof_count + (6 if a.mjcf_root_free else 0) for a in model.articulations)
    assert dofs == mj.nv


@pytest.mark.parametrize(("key", "path"), _mjcfs())
def test_mass_properties_match_mujoco(key, path):
    """Per body: mass, COM (body frame) and inertia tensor about the COM (body axes) equal MuJoCo's to 1e-6
    relative; the total mass and the dof count too. A refused model is refused with its listed reason."""
    try:
        mj = mujoco.MjModel.from_xml_path(str(path))
    except ValueError as e:
        pytest.skip(f"MuJoCo does not load it: {e}")
    if key in REFUSED:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(MjcfError, match=REFUSED[key]):
                artic.load_mjcf(path)
        return
    _compare(path, mj)

"""MuJoCo's elliptic cone's per-contact solve (constraints/elliptic.py, `cone_qp`), checked by its optimality
conditions and against a search of the cone's surface (with SciPy's scalar minimizer); and the direct solver's
report of the sweeps that put its contacts on the cone.

For min 1/2 l^T H l - q^T l over the cone K = {|l_t| <= f l_n}, l is the answer exactly when l lies in K, the
gradient w = H l - q lies in the dual cone K* = {w_n >= f |w_t|}, and l . w = 0 (conic complementarity)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import warp as wp
from scipy.optimize import minimize_scalar

import artic
from artic import SolverType
from artic.collision.contacts import ContactPoints
from artic.constraints.contact_arrays import ContactRows, vec6
from artic.constraints.elliptic import cone_qp, mat66, solve_elliptic_patch
from artic.constraints.row_form import RowForm
from artic.solvers.cone_polish import polish_cones
from artic.solvers.direct_arrays import DirectArrays
from tests.support.nvrtc import ptx_files


@wp.kernel
def _cone_qp_kernel(
    h: wp.array(dtype=mat66),
    q: wp.array(dtype=vec6),
    old: wp.array(dtype=vec6),
    mu: wp.array(dtype=vec6),
    dim: int,
    out: wp.array(dtype=vec6),
):
    i = wp.tid()
    out[i] = cone_qp(h[i], q[i], old[i], mu[i], dim)


@wp.kernel
def _device_paths_kernel(
    cp: ContactPoints, ct: ContactRows, v: wp.array2d(dtype=float), rf: RowForm, da: DirectArrays, n_gen: int
):
    """Not launched: the PGS patch solve and the direct solver's polish in one kernel, compiled for CUDA below."""
    env = wp.tid()
    solve_elliptic_patch(cp, ct, v, env, 0, cp.count[env], n_gen)
    da.cone_sweeps[env] = polish_cones(rf, da, env, rf.count[env])


def _problems(count: int, dim: int = 3, seed: int = 3):
    """Random contacts with dim - 1 friction components: H = J M^-1 J^T + diag(R_n, R_t, ...) with a random positive
    definite block and R from 1e-3 to 1 of its diagonal, q of either sign (a third pressed into the surface with a
    small push along), sliding coefficients f in [0.1, 1.5] and angular ones (dim > 3) in [0.005, 0.1], half of them
    warm-started from a point of the cone."""
    rng = np.random.default_rng(seed)
    hs, qs, olds, mus = [], [], [], []
    for k in range(count):
        j = rng.normal(size=(dim, dim))
        a = j @ j.T + 1e-2 * np.eye(dim)
        r_n = 10.0 ** rng.uniform(-3, 0) * a[0, 0]
        r_t = r_n / 10.0 ** rng.uniform(0, 1)  # R_t = R_n / impratio
        f = rng.uniform(0.1, 1.5)
        mu = np.array([0.0, f, f] + list(rng.uniform(0.005, 0.1, size=dim - 3)))
        hs.append(a + np.diag([r_n] + [r_t * f**2 / mu[i] ** 2 for i in range(1, dim)]))
        qk = rng.normal(size=dim) * np.array([1.0] + [2.0] * (dim - 1))
        if k % 3 == 0:  # pressed, with little push along: mostly sticking
            qk = np.concatenate([[abs(qk[0]) + 1.0], 0.1 * qk[1:]])
        qs.append(qk)
        mus.append(mu)
        n = abs(rng.normal())
        u = rng.normal(size=dim - 1)
        olds.append(np.concatenate([[n], 0.9 * n * mu[1:] * u / np.linalg.norm(u)]) if k % 2 else np.zeros(dim))
    return [np.array(x, np.float32) for x in (hs, qs, olds, mus)]


def _pad(x: np.ndarray) -> np.ndarray:
    """(count, d) or (count, d, d) into the kernel's 6-vectors and 6 x 6 matrices (zeros beyond d)."""
    out = np.zeros((len(x), 6) + ((6,) if x.ndim == 3 else ()), np.float32)
    d = x.shape[1]
    if x.ndim == 3:
        out[:, :d, :d] = x
    else:
        out[:, :d] = x
    return out


def _solve(h, q, old, mu):
    dim = q.shape[1]
    out = wp.zeros(len(q), dtype=vec6, device="cpu")
    arrays = [wp.array(_pad(x), dtype=t, device="cpu") for x, t in ((h, mat66), (q, vec6), (old, vec6), (mu, vec6))]
    wp.launch(_cone_qp_kernel, dim=len(q), inputs=[*arrays, dim, out], device="cpu")
    return out.numpy().astype(np.float64)[:, :dim]


@pytest.mark.parametrize("dim", [3, 4, 6], ids=["sliding", "torsion", "rolling"])
def test_cone_qp_meets_the_conic_optimality_conditions(dim):
    """400 random contacts (sliding friction; with torsional; with torsional and rolling): every answer lies in K,
    its gradient in K* = {w_n >= |(mu_k w_k)|}, and the two are complementary, to float32 precision (1e-5 of the
    impulse and of w's terms); the three cases occur (inside the cone: sticking; on its surface: sliding; zero:
    separating), each at least 20 times."""
    h, q, old, mu = _problems(400, dim)
    lam = _solve(h, q, old, mu)
    cases = {"inside": 0, "surface": 0, "zero": 0}
    for k in range(len(q)):
        hk, qk, mk, lk = h[k].astype(np.float64), q[k].astype(np.float64), mu[k].astype(np.float64), lam[k]
        w = hk @ lk - qk
        tol_l = 1e-5 * np.abs(lk).max() + 1e-9 * np.abs(qk).max() / np.abs(hk).max()
        tol_w = 1e-5 * (np.abs(hk).max() * np.abs(lk).max() + np.abs(qk).max())  # w's rounding in float32
        friction = np.linalg.norm(lk[1:] / mk[1:])
        assert lk[0] >= -tol_l and friction <= lk[0] + tol_l * (1 + 1 / mk[1:].min()), (k, lk, mk)
        assert w[0] >= np.linalg.norm(mk[1:] * w[1:]) - tol_w, (k, w, mk)
        assert abs(lk @ w) <= tol_w * np.abs(lk).max(), (k, lk, w)
        if np.abs(lk).max() <= tol_l:
            cases["zero"] += 1
        elif friction < lk[0] * (1 - 1e-4):
            cases["inside"] += 1
        else:
            cases["surface"] += 1
    assert min(cases.values()) >= 20, cases


def _search(hk, qk, fk):
    """The problem's answer by another route: the unconstrained minimum if it lies in the cone; else the best of zero
    and the cone's surface, l = s (1, f cos a, f sin a) with the best s >= 0 for each a (cost -(d.q)^2 / 2 d.H.d where
    d.q > 0), a found on a grid of 20000 and refined by SciPy's bounded scalar minimizer."""
    x = np.linalg.solve(hk, qk)
    if x[0] >= 0 and np.hypot(x[1], x[2]) <= fk * x[0]:
        return x

    def direction(a):
        return np.array([np.ones_like(a), fk * np.cos(a), fk * np.sin(a)])

    def cost(a):
        d = direction(np.atleast_1d(a))
        dq = qk @ d
        return np.where(dq > 0, -(dq**2) / (2 * np.einsum("ik,ij,jk->k", d, hk, d)), 0.0)

    grid = np.linspace(0, 2 * np.pi, 20001)
    a0 = grid[np.argmin(cost(grid))]
    step = grid[1] - grid[0]
    a = minimize_scalar(lambda t: float(cost(t)[0]), bounds=(a0 - step, a0 + step), method="bounded",
                        options={"xatol": 1e-12}).x  # fmt: skip
    d = direction(np.array([a]))[:, 0]
    return d * max(qk @ d, 0.0) / (d @ hk @ d)


def test_cone_qp_equals_a_search_of_the_cone():
    """120 random contacts: the answers equal those of a search over the cone's surface (_search) to 1e-4 of the
    largest impulse, and their costs to 1e-5 of |q| times it."""
    h, q, old, mu = _problems(120, seed=11)
    lam = _solve(h, q, old, mu)
    for k in range(len(q)):
        hk, qk, fk = h[k].astype(np.float64), q[k].astype(np.float64), float(mu[k, 1])
        ref = _search(hk, qk, fk)
        scale = np.abs(ref).max() + 1e-9
        np.testing.assert_allclose(lam[k], ref, atol=1e-4 * scale, err_msg=str(k))
        cost_scale = np.abs(qk).max() * scale
        assert abs((0.5 * lam[k] @ hk @ lam[k] - qk @ lam[k]) - (0.5 * ref @ hk @ ref - qk @ ref)) < 1e-5 * cost_scale


_BOX = """<mujoco><option timestep="0.002" {cone}/><worldbody><geom type="plane" size="5 5 .1" friction="0.5"/>
<body pos="0 0 0.0995"><freejoint/><geom type="box" size=".1 .1 .1" mass="1" friction="0.5"/></body>
</worldbody></mujoco>"""


@pytest.mark.parametrize("cone", ["elliptic", "pyramidal"])
def test_direct_report_counts_the_cone_sweeps(tmp_path, cone):
    """A box sliding on its floor under the direct solver: with the elliptic cone the report counts the sweeps that
    brought its contacts onto the cone (> 0, converged: friction_settled), under the pyramid none."""
    path = tmp_path / "box.xml"
    path.write_text(_BOX.format(cone='cone="elliptic"' if cone == "elliptic" else ""))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = artic.load_mjcf(path)
    scene = artic.Scene(2, gravity=model.gravity, solver_type=SolverType.DIRECT)
    model.add_to(scene)
    art = model.articulations[0]
    cache = art.create_cache()
    art.copy_internal_state_to_cache(cache, artic.CacheFlag.ALL)
    cache.root_linear_velocity[:] = (1.0, 0.5, 0.0)
    art.apply_cache(cache, artic.CacheFlag.ROOT_VELOCITIES)
    scene.step(model.timestep)  # the box starts 0.5 mm into its floor: four contacts
    report = scene.get_solver_report(art)
    assert (report["rows"] == (12 if cone == "elliptic" else 16)).all()
    assert not report["fell_back"].any()
    assert report["friction_settled"].all()
    if cone == "elliptic":
        assert (report["cone_sweeps"] > 0).all()
    else:
        assert (report["cone_sweeps"] == 0).all()


def test_a_material_has_one_cone():
    """`Material.pyramid_impratio` and `elliptic_impratio` are two cones: setting the second while the first is set
    is refused by name (so a material never carries both, silently one of them), and a negative impratio too."""
    m = artic.Material(elliptic_impratio=2.0)
    with pytest.raises(artic.ArticError, match="pyramid_impratio and elliptic_impratio are two cones"):
        m.pyramid_impratio = 1.0
    with pytest.raises(artic.ArticError, match="elliptic_impratio"):
        artic.Material(pyramid_impratio=1.0, elliptic_impratio=1.0)
    with pytest.raises(artic.ArticError, match="elliptic_impratio must be >= 0"):
        artic.Material(elliptic_impratio=-1.0)
    m.elliptic_impratio = 0.0
    m.pyramid_impratio = 1.0  # one at a time: allowed once the other is 0
    assert (m.pyramid_impratio, m.elliptic_impratio) == (1.0, 0.0)


def test_the_cone_code_compiles_for_cuda(tmp_path):
    """cone_qp, the PGS patch solve and the direct solver's polish compile to CUDA PTX for sm_90 through NVRTC,
    without a GPU (they live in the step kernel, whose whole NVRTC compile is too slow for the suite)."""
    assert ptx_files(__name__, tmp_path)

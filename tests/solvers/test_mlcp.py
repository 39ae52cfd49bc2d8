"""The pivoting solver of the bounded mixed LCP (artic/solvers/mlcp.py) on random problems: the complementarity
conditions hold at its answer, and it equals an independent float64 solution (SciPy's bounded least squares on the
equivalent box QP)."""

import numpy as np
import pytest
import warp as wp
from scipy.optimize import lsq_linear

from artic.solvers.free_factor import FactorMemo
from artic.solvers.mlcp import (
    MAX_FRICTION_PASSES,
    complementarity_error,
    solve_box_lcp,
    solve_friction_lcp,
    start_state,
)
from tests.support.nvrtc import ptx_files

M = 14


@wp.kernel
def _solve_kernel(
    a: wp.array3d(dtype=wp.float64),
    b: wp.array2d(dtype=wp.float64),
    lo: wp.array2d(dtype=wp.float64),
    hi: wp.array2d(dtype=wp.float64),
    x: wp.array2d(dtype=wp.float64),
    state: wp.array2d(dtype=int),
    chol: wp.array3d(dtype=wp.float64),
    free: wp.array2d(dtype=int),
    nfree: wp.array(dtype=int),
    y: wp.array2d(dtype=wp.float64),
    g: wp.array3d(dtype=float),
    memo: FactorMemo,
    findex: wp.array2d(dtype=int),
    fcount: wp.array2d(dtype=int),
    mu_s: wp.array2d(dtype=float),
    mu_d: wp.array2d(dtype=float),
    sizes: wp.array(dtype=int),
    friction: int,
    reg_cap: wp.float64,
    out: wp.array2d(dtype=wp.float64),
):
    env = wp.tid()
    m = sizes[env]
    if friction != 0:
        res = solve_friction_lcp(
            a,
            b,
            lo,
            hi,
            x,
            state,
            chol,
            free,
            nfree,
            y,
            g,
            memo,
            findex,
            fcount,
            mu_s,
            mu_d,
            env,
            m,
            reg_cap,
            0,
            MAX_FRICTION_PASSES,
            0,
        )
        out[env, 0] = wp.float64(res[0])
        out[env, 1] = wp.float64(res[1])
        out[env, 3] = wp.float64(res[2])
    else:
        start_state(lo, hi, x, state, env, m)
        res2 = solve_box_lcp(
            a,
            b,
            lo,
            hi,
            x,
            state,
            chol,
            free,
            nfree,
            y,
            g,
            memo,
            findex,
            fcount,
            mu_s,
            mu_d,
            env,
            m,
            reg_cap,
            0,
            0,
            0,
        )
        out[env, 0] = wp.float64(res2[0])
        out[env, 1] = wp.float64(res2[1])
    out[env, 2] = complementarity_error(a, b, lo, hi, x, state, y, env, m, 0)


def _run(problems, friction=False, reg_cap=1.0e30, directions=None, memo=None):
    """Solve each problem in its own env: (x, out, lo, hi, y). directions: (E, M, N) rows' g (zeros: none); memo: a
    FactorMemo (a fresh, empty one by default)."""
    e = len(problems)
    a = np.zeros((e, M, M), np.float64)
    b = np.zeros((e, M), np.float64)
    lo = np.zeros((e, M), np.float64)
    hi = np.zeros((e, M), np.float64)
    findex = -np.ones((e, M), np.int32)
    fcount = np.zeros((e, M), np.int32)
    mu = np.zeros((e, M), np.float32)
    sizes = np.zeros(e, np.int32)
    for k, p in enumerate(problems):
        m = len(p["b"])
        sizes[k] = m
        a[k, :m, :m] = p["A"]
        b[k, :m] = p["b"]
        lo[k, :m] = p["lo"]
        hi[k, :m] = p["hi"]
        if "findex" in p:
            findex[k, :m] = p["findex"]
            fcount[k, :m] = 1
            mu[k, :m] = p["mu"]
    arrays = [wp.array(v, dtype=wp.float64) for v in (a, b, lo, hi)]
    x = wp.zeros((e, M), dtype=wp.float64)
    y = wp.zeros((e, 4 * M), dtype=wp.float64)
    out = wp.zeros((e, 4), dtype=wp.float64)
    g = np.zeros((e, M, 1), np.float32) if directions is None else directions
    wp.launch(
        _solve_kernel,
        e,
        [
            *arrays,
            x,
            wp.zeros((e, M), dtype=int),
            wp.zeros((e, M, M), dtype=wp.float64),
            wp.zeros((e, M), dtype=int),
            wp.full(e, -1, dtype=int),
            y,
            wp.array(g, dtype=float),  # zeros: no directions, dependent rows by their pivots alone
            _memo(e) if memo is None else memo,
            wp.array(findex, dtype=int),
            wp.array(fcount, dtype=int),
            wp.array(mu, dtype=float),
            wp.array(mu, dtype=float),
            wp.array(sizes, dtype=int),
            int(friction),
            wp.float64(reg_cap),
            out,
        ],
        device="cpu",
    )
    return x.numpy(), out.numpy(), arrays[2].numpy(), arrays[3].numpy(), y.numpy()


def _memo(e):
    """An empty FactorMemo (no verdicts yet) for e envs."""
    memo = FactorMemo()
    memo.free, memo.dependent = wp.zeros((e, M), dtype=int), wp.zeros((e, M), dtype=int)
    memo.count = wp.zeros(e, dtype=int)
    return memo


def _random_problem(rng, m, rank_deficient=False):
    n = max(1, m - 2) if rank_deficient else m + 3
    g = rng.normal(size=(m, n))
    minv = np.diag(rng.uniform(0.5, 2.0, n))
    a = g @ minv @ g.T + np.diag(rng.uniform(1e-3, 1e-2, m) if not rank_deficient else np.zeros(m))
    kind = rng.integers(0, 4, m)
    lo = np.where(kind == 0, -np.inf, np.where(kind == 1, 0.0, np.where(kind == 2, -np.inf, -0.5)))
    hi = np.where(kind == 0, np.inf, np.where(kind == 1, np.inf, np.where(kind == 2, 0.0, 0.5)))
    return {"A": a, "b": rng.normal(size=m), "lo": lo, "hi": hi}


def _check_conditions(a, b, lo, hi, x, tol, bound_tol=1e-6):
    w = a @ x - b
    at_lo = np.abs(x - lo) <= np.maximum(1e-5 * np.maximum(1, np.abs(x)), bound_tol)
    at_hi = np.abs(hi - x) <= np.maximum(1e-5 * np.maximum(1, np.abs(x)), bound_tol)
    free = ~at_lo & ~at_hi
    assert np.all(x >= lo - bound_tol) and np.all(x <= hi + bound_tol)
    assert np.all(np.abs(w[free]) <= tol)
    assert np.all(w[at_lo & ~at_hi] >= -tol)
    assert np.all(w[at_hi & ~at_lo] <= tol)


def test_random_problems_meet_the_conditions_and_equal_a_float64_solution():
    """Random well-posed bounded mLCPs (unbounded, non-negative, non-positive and boxed rows, sizes 1-14): the
    solver reports success, the conditions hold at its answer to 1e-4, and lambda equals SciPy's float64 solution
    of the equivalent box QP (min 1/2 l'Al - b'l) to 1e-3 of the largest impulse."""
    rng = np.random.default_rng(7)
    problems = [_random_problem(rng, int(rng.integers(1, M + 1))) for _ in range(200)]
    x, out, _, _, _ = _run(problems)
    assert np.all(out[:, 1] == 1), f"{int((out[:, 1] != 1).sum())} problems not solved"
    for k, p in enumerate(problems):
        m = len(p["b"])
        xk = x[k, :m].astype(np.float64)
        scale = max(1.0, np.abs(p["b"]).max())
        _check_conditions(p["A"], p["b"], p["lo"], p["hi"], xk, 1e-4 * scale)
        chol = np.linalg.cholesky(p["A"])
        ref = lsq_linear(
            chol.T, np.linalg.solve(chol, p["b"]), bounds=(p["lo"], p["hi"]), tol=1e-14, lsmr_tol="auto", max_iter=2000
        ).x
        assert np.abs(xk - ref).max() <= 1e-3 * max(1.0, np.abs(ref).max()), (k, xk, ref)
    assert out[:, 2].max() <= 1e-4 * max(1.0, max(np.abs(p["b"]).max() for p in problems))


def test_rank_deficient_problems_are_solved_with_the_regularization_floor():
    """Singular A (more rows than the dofs they act on, as redundant loop rows make): the solver still succeeds,
    the bounds hold exactly and w meets the conditions within the floor's compliance (1e-6 A_ii |lambda| + 1e-4)."""
    rng = np.random.default_rng(11)
    problems = [_random_problem(rng, int(rng.integers(3, M + 1)), rank_deficient=True) for _ in range(100)]
    # consistent right-hand sides: b in A's range, as rows describing one motion twice are
    for p in problems:
        p["b"] = p["A"] @ rng.normal(size=len(p["b"]))
    x, out, _, _, _ = _run(problems)
    assert np.all(out[:, 1] == 1)
    for k, p in enumerate(problems):
        m = len(p["b"])
        xk = x[k, :m].astype(np.float64)
        tol = 1e-6 * np.abs(np.diag(p["A"])).max() * np.abs(xk).max() + 1e-3 * max(1.0, np.abs(p["b"]).max())
        _check_conditions(p["A"], p["b"], p["lo"], p["hi"], xk, tol)


def test_a_factorization_memo_gives_the_same_answer():
    """The dependent-row verdicts a factorization records (free_factor.FactorMemo) and the next one over the same
    rows reuses, skipping the directions test: the rank-deficient problems above solved again with the memo of their
    first solve give the same impulses (1e-12), and the memo holds a verdict of 'dependent' for some of their rows."""
    rng = np.random.default_rng(11)
    problems = [_random_problem(rng, int(rng.integers(3, M + 1)), rank_deficient=True) for _ in range(40)]
    for p in problems:
        p["b"] = p["A"] @ rng.normal(size=len(p["b"]))
    memo = _memo(len(problems))
    x1, out1, _, _, _ = _run(problems, memo=memo)
    np.testing.assert_array_equal(memo.count.numpy(), [len(p["b"]) for p in problems])
    assert (memo.dependent.numpy() == 1).sum() > 0
    x2, out2, _, _, _ = _run(problems, memo=memo)
    assert np.all(out1[:, 1] == 1) and np.all(out2[:, 1] == 1)
    np.testing.assert_allclose(x2, x1, rtol=1e-12, atol=1e-12 * np.abs(x1).max())


def _friction_problem(rng, contacts):
    """Contacts with a normal row (lambda >= 0) and two friction rows boxed by mu lambda_n (findex)."""
    m = 3 * contacts
    n = 6 + m // 2
    g = rng.normal(size=(m, n))
    a = g @ np.diag(rng.uniform(0.5, 2.0, n)) @ g.T + 1e-3 * np.eye(m)
    lo = np.zeros(m)
    hi = np.full(m, np.inf)
    findex = -np.ones(m, np.int32)
    mu = np.zeros(m)
    for c in range(contacts):
        findex[3 * c + 1 : 3 * c + 3] = 3 * c
        mu[3 * c + 1 : 3 * c + 3] = rng.uniform(0.1, 1.0)
        lo[3 * c + 1 : 3 * c + 3] = -np.inf  # replaced by the solver's boxes
    b = rng.normal(size=m)
    b[0::3] = np.abs(b[0::3])  # pressing contacts
    return {"A": a, "b": b, "lo": lo, "hi": hi, "findex": findex, "mu": mu}


def test_friction_boxes_follow_the_normal_impulses():
    """Random contact problems with friction indices: every solve succeeds, at least 95 % of the problems settle
    their boxes (a linear fixed point; the rest are reported), and where they settle every friction impulse lies
    within +-mu lambda_n of its final normal impulse (to 2e-5 of the largest impulse, the settling
    tolerance) and the conditions hold for those boxes."""
    rng = np.random.default_rng(3)
    problems = [_friction_problem(rng, int(rng.integers(1, M // 3 + 1))) for _ in range(150)]
    x, out, _lo, _hi, _ = _run(problems, friction=True)
    assert np.all(out[:, 1] == 1)  # no solve failed
    assert np.all(out[:, 3] != 2) and np.all(out[:, 3] != 3)  # nor spent its pivot budget
    settled = out[:, 3] == 0
    assert settled.mean() >= 0.95, f"only {settled.sum()} of {len(problems)} settled"
    for k, p in enumerate(problems):
        if not settled[k]:
            continue
        m = len(p["b"])
        xk = x[k, :m].astype(np.float64)
        bound = p["mu"] * np.where(p["findex"] >= 0, xk[np.maximum(p["findex"], 0)], 0.0)
        fr = p["findex"] >= 0
        assert np.all(np.abs(xk[fr]) <= bound[fr] + 2e-5 * np.abs(xk).max() + 1e-7)
        lo_k = np.where(fr, -bound, p["lo"])
        hi_k = np.where(fr, bound, p["hi"])
        _check_conditions(
            p["A"],
            p["b"],
            lo_k,
            hi_k,
            xk,
            1e-4 * max(1.0, np.abs(p["b"]).max()),
            bound_tol=2e-5 * np.abs(xk).max() + 1e-7,
        )


@pytest.mark.parametrize("seed", [0, 1])
def test_a_single_soft_row_is_the_implicit_spring(seed):
    """The ODE paper's eq. 13 for one row: with A = 1/m + cfm, cfm = 1/(h (h k + d)) and b = -v - x k/(h k + d)
    (the row's target velocity minus its current velocity), lambda is h f with f = -(d v + k x + h k v) /
    (1 + h d/m + h^2 k/m)."""
    rng = np.random.default_rng(seed)
    problems, expect = [], []
    for _ in range(20):
        mass, k, d, h = rng.uniform(0.1, 10), rng.uniform(1, 1e4), rng.uniform(0, 100), rng.uniform(1e-3, 2e-2)
        xx, v = rng.normal(), rng.normal()
        cfm = 1.0 / (h * (h * k + d))
        problems.append(
            {
                "A": np.array([[1.0 / mass + cfm]]),
                "b": np.array([-v - xx * k / (h * k + d)]),
                "lo": np.array([-np.inf]),
                "hi": np.array([np.inf]),
            }
        )
        expect.append(h * -(d * v + k * xx + h * k * v) / (1 + h * d / mass + h * h * k / mass))
    x, _out, _, _, _ = _run(problems)
    np.testing.assert_allclose(x[:, 0], expect, rtol=1e-5)


def test_a_limit_under_a_stiff_drive_is_solved_exactly_without_regularization():
    """Closed form: one dof of response r = 2 (1 / kg), a drive row of compliance c = 1e-7 asking for +1 m/s within
    a box of +-10 N s, and a limit row along the same direction holding the dof at 0 m/s (lambda <= 0). Exact answer:
    the drive at its bound, 10, and the limit carrying -10, the dof still (the drive's own w, 10 c - 1, is negative
    at its upper bound, as the conditions ask). Appended after the drive, the limit's pivot r c / (r + c) ~ c is
    below 1e-4 of its entry and its direction is the drive's, so by pivot and direction it is "dependent"; but the
    drive's compliance already makes that pivot, 1e3 times the regularization the cap (1e-3 c) would give, so the row
    is left unregularized (y's fourth part 0: free_factor.EXPLAINED) and needs no refinement."""
    r, c = 2.0, 1.0e-7
    a = np.array([[r + c, r], [r, r]])
    b = np.array([1.0, 0.0])
    problem = {"A": a, "b": b, "lo": np.array([-10.0, -np.inf]), "hi": np.array([10.0, 0.0])}
    directions = np.zeros((1, M, 1), np.float32)
    directions[0, :2, 0] = 1.0
    x, out, _, _, y = _run([problem], reg_cap=1.0e-3 * c, directions=directions)
    assert out[0, 1] == 1
    assert np.all(y[0, 3 * M : 3 * M + 2] == 0.0)  # no row regularized
    np.testing.assert_allclose(x[0, :2], [10.0, -10.0], rtol=1e-12)
    _check_conditions(a, b, problem["lo"], problem["hi"], x[0, :2], 1e-9)


def test_the_solver_compiles_for_cuda(tmp_path):
    """The pivoting solver's kernel (this module's, which calls every function of solvers/mlcp.py) compiles to
    CUDA PTX for sm_90 through NVRTC, without a GPU: GPU-only compile errors show up on the CPU-only CI."""
    assert ptx_files(__name__, tmp_path)

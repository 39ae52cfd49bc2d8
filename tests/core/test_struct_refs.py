"""artic/core/struct_refs.py: struct parameters by reference where the generated function only reads them.

What must hold: Warp's by-value semantics of structs (a function that assigns a field of its struct argument does not
change its caller's), the rule that decides it on Warp's generated code, and that a module that opts in compiles for
the CPU and, through NVRTC, for CUDA."""

from __future__ import annotations

import pytest
import warp as wp

from artic.core import struct_refs
from artic.core.struct_refs import OPTION, _mutated, by_reference
from tests.support.nvrtc import ptx_files

struct_refs.opt_in(__name__)
wp.set_module_options({"enable_backward": False})  # a function with a wp.ref parameter needs it off

CHECKED_WARP = "1.19."  # the Warp whose code generator struct_refs.py was written against


@wp.struct
class _Pair:
    x: float
    a: wp.array(dtype=float)


@wp.func
def _writes(s: _Pair, k: int) -> float:
    s.x = 2.0  # the caller's struct must not see this
    s.a[k] = 3.0  # the array's contents are shared either way
    return s.x


@wp.func
def _reads(s: _Pair, k: int) -> float:
    return s.x + s.a[k]


@wp.func
def _through_ref(s: _Pair, r: wp.ref[float]) -> float:
    r = 5.0  # noqa: F841  (a store through the ref, into the caller's variable)
    return s.x


@wp.kernel
def _probe(s: _Pair, out: wp.array(dtype=float)):
    s.x = 1.0
    y = _writes(s, 0)
    out[0] = s.x + y  # 1 + 2 by value; a reference would give 2 + 2
    out[1] = _reads(s, 0)  # 1 + 3
    out[2] = s.a[0]
    z = float(0.0)
    out[3] = _through_ref(s, z)


def test_it_applies_to_this_warp():
    """On the Warp it was written against, the wrap is in place and an opted-in module carries the option that
    keys its kernel cache (elsewhere it may stand aside, and the structs are copied as before)."""
    if not wp.config.version.startswith(CHECKED_WARP):
        pytest.skip(f"struct_refs.py was checked against Warp {CHECKED_WARP}x, this is {wp.config.version}")
    assert struct_refs.active()
    assert wp.get_module(__name__).options.get(OPTION)


def test_a_function_that_writes_its_struct_keeps_a_copy():
    s = _Pair()
    s.a = wp.zeros(2, dtype=float, device="cpu")
    s.x = 0.0
    out = wp.zeros(4, dtype=float, device="cpu")
    wp.launch(_probe, dim=1, inputs=[s, out], device="cpu")
    assert out.numpy().tolist() == [3.0, 4.0, 3.0, 1.0]


def test_the_generated_code_takes_references_only_where_the_rule_allows():
    """This module's code as Warp generates it (no compile): the reading function takes its struct by restricted
    reference, the writing one and the one with a wp.ref parameter keep their copies."""
    if not wp.config.version.startswith(CHECKED_WARP):
        pytest.skip(f"struct_refs.py was checked against Warp {CHECKED_WARP}x, this is {wp.config.version}")
    from warp._src.context import ModuleBuilder

    module = wp.get_module(__name__)
    source = ModuleBuilder(module, module.options | {"output_arch": None}, target="cpu").codegen("cpu")

    def signature(name: str) -> str:
        start = source.index(f" {name}(")
        return source[start : source.index(")", start)]

    assert "& __restrict__ var_s" in signature("_reads_0")
    assert "& " not in signature("_writes_0") and " var_s" in signature("_writes_0")
    assert "& " not in signature("_through_ref_0") and " var_s" in signature("_through_ref_0")


# forward statements as Warp 1.19 generates them (after its "// forward" comment), and whether they change `var_s`
STATEMENTS = {
    "a field assigned": ("var_s.x = var_0;", True),
    "a field of a field assigned": ("var_s.v.y = var_0;", True),
    "a field loaded through its address": ("var_0 = &((var_s).x);\n var_1 = wp::load(var_0);", False),
    "a vector field stored into": (
        "var_1 = &((var_s).v);\n var_3 = wp::indexref(var_1, var_2);\n wp::store(var_3, var_0);",
        True,
    ),
    "an array's shape read": ("var_5 = &((var_s).a);\n var_6 = &(var_5->shape);\n var_9 = wp::load(var_6);", False),
    "an argument of a generated function": ("foo_0(var_s, var_env);\n var_2 = bar_12(var_a, var_s);", False),
    "an argument of a builtin that assigns": ("wp::assign(var_s, var_3);", True),
    "copied whole": ("var_7 = var_s;", False),
    "a field's address passed on": ("wp::atomic_add(&((var_s).x), var_1);", True),
    "its own address taken": ("var_2 = &var_s;", True),
    "a nested struct's field, only read (kept by value: the rule does not follow nested fields)": (
        "var_75 = &(((var_s).memo).count);\n var_76 = wp::load(var_75);",
        True,
    ),
    "a store through a field's address": ("var_3 = &((var_s).x);\n *var_3 = var_1;", True),
    "its address passed to a generated function": ("foo_0(&var_s);", True),
    "a variable whose name starts alike": ("var_sx = var_0;\n var_q = &((var_s).x);\n var_r = wp::load(var_q);", False),
}


@pytest.mark.parametrize("case", list(STATEMENTS))
def test_the_rule_on_generated_statements(case):
    code, changes = STATEMENTS[case]
    assert _mutated("// forward\n " + code + "\n", "var_s") is changes


def test_only_the_parameters_left_unchanged_become_references():
    source = (
        "static void f_0(\n    S_1 var_s,\n    S_1 var_t,\n    wp::int32 var_k)\n{\n    // forward\n"
        "    var_0 = &((var_s).x);\n    var_1 = wp::load(var_0);\n    var_t.x = var_1;\n}\n"
        "static void adj_f_0(\n    S_1 var_s,\n    S_1 var_t,\n    wp::int32 var_k,\n    S_1 & adj_s,\n"
        "    S_1 & adj_t,\n    wp::int32 & adj_k)\n{\n}\n"
    )
    out = by_reference(source, "f_0", [("S_1", "var_s"), ("S_1", "var_t")])
    assert out.count("S_1& __restrict__ var_s,") == 2  # the function and an adjoint in the same text
    assert out.count("S_1 var_t,") == 2
    assert "S_1 & adj_s," in out
    # code without the generator's "// forward" marker is left alone
    # a call to a function whose name ends like the adjoint's does not cut the forward code short
    calls = source.replace("    var_t.x = var_1;", "    var_2 = my_adj_f_0();\n    var_s.x = var_2;")
    assert "S_1 var_s," in by_reference(calls, "f_0", [("S_1", "var_s")])
    unmarked = source.replace("// forward", "")
    assert by_reference(unmarked, "f_0", [("S_1", "var_s")]) == unmarked


def test_an_opted_in_module_compiles_for_cuda(tmp_path):
    """This module's kernel, with its references, compiles to CUDA PTX for sm_90 through NVRTC, without a GPU."""
    assert ptx_files(__name__, tmp_path)


def test_the_step_kernel_compiles_for_cuda(tmp_path):
    """The whole step (sim/step_kernel.py: every stage and solver, its struct parameters by reference) compiles to
    CUDA PTX for sm_90 through NVRTC, without a GPU (about 80 s on the CI's 2 cores)."""
    import artic.sim.step_kernel  # noqa: F401  (registers the module's kernels)

    assert ptx_files("artic.sim.step_kernel", tmp_path)


def test_every_module_with_kernels_opts_in():
    """A kernel module that forgot `opt_in(__name__)` would copy its structs again, silently slower."""
    if not struct_refs.active():
        pytest.skip("struct_refs stands aside on this Warp")
    import importlib
    from pathlib import Path

    root = Path(struct_refs.__file__).resolve().parents[1]
    names = sorted(
        "artic." + ".".join(p.relative_to(root).with_suffix("").parts)
        for p in root.rglob("*.py")
        if "wp.kernel" in p.read_text()
    )
    assert "artic.sim.step_kernel" in names
    for name in names:
        importlib.import_module(name)
        assert wp.get_module(name).options.get(OPTION), f"{name} defines kernels but does not call opt_in(__name__)"

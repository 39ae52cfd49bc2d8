"""Warp functions that take artic's structs by reference where they only read them.

Warp's generated C++ passes every struct argument of a `@wp.func` by value. artic's tables are structs of dozens of
arrays (each array 56 bytes: DirectArrays 2.7 KB, StepData 2.1 KB; the direct solver's entry takes 19 KB of them),
and every call the compiler does not inline copies them onto the stack, even one that returns at once. On a small
robot at one env those copies are a large share of the step: an articulation without dofs took 5.3 us a step
(2.7 with references), TGS's 100 substeps of it 30 us (5.0), the Gymnasium pusher 24.4 us (19.6); see
docs/benchmarks.md.

Importing this module wraps Warp's code generator (`warp._src.codegen.codegen_func`) so that in the modules that
opt in (`opt_in(__name__)`: a module option, which also keys Warp's kernel cache), a struct parameter becomes a C++
reference where the generated function provably leaves the struct itself unchanged: no field of it is assigned and
no pointer into it is used but to load (`_mutated`). A function that writes one keeps its copy, so the by-value
semantics of Warp's structs hold in every case; what a function writes into a struct's arrays is not the struct's
and is the same either way. Only forward code is changed: Warp 1.19 generates adjoints in a pass of their own,
which keeps its copies. A function with a `wp.ref` parameter keeps all of them (a reference to the caller's struct,
or to one of its fields, could change a struct it also holds as a restricted reference).

The references are `__restrict__`: a plain reference lets the compiler assume that every store into an array may
change the struct's fields (the arrays' data pointers and strides), so a hot loop reloads them after each store;
a copy could not alias, and the Adroit pen's step went 100 -> 110 us with plain references, 93 us with restricted
ones. The promise holds because nothing writes these structs while the function runs (it does not, by the rule
above, and its callers do not: one env per thread, no struct shared between threads is written).

This relies on Warp's private code generator (checked with Warp 1.19). Where it is not as expected, nothing is
wrapped, `opt_in` sets nothing, and the structs are copied as before: slower, same results.
tests/core/test_struct_refs.py checks that it applies on the installed Warp and keeps the semantics.
"""

from __future__ import annotations

import hashlib
import inspect
import re
from collections import Counter
from pathlib import Path

import warp as wp

OPTION = "artic_struct_refs"  # the module option
# its value, which keys Warp's kernel cache: this file's own text, so that a change to the rule below compiles again
try:
    _RULE = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]
except OSError:  # installed where its source cannot be read (a zip): no key for the rule, so no references
    _RULE = None
_active = False


class _Statements:
    """One function's generated forward statements, with what the rule counts in them, once for all its
    parameters: each variable's uses, the statements that assign it, the loads from it, and the field addresses
    taken through it (`var_6 = &(var_5->shape);`)."""

    def __init__(self, text: str):
        self.text = text
        self.uses = Counter(re.findall(r"\bvar_\w+", text))
        self.assigned = Counter(re.findall(r"(?m)^\s*(var_\w+) = ", text))  # `*var_3 = x` stores: not counted
        self.loads = Counter(re.findall(r"wp::load\((var_\w+)\)", text))
        self.derived: dict[str, list[str]] = {}
        for q, p in re.findall(r"\b(var_\w+) = &\((var_\w+)->\w+\);", text):
            self.derived.setdefault(p, []).append(q)


def _only_loaded(st: _Statements, pointer: str) -> bool:
    """Whether `pointer` (a variable holding a field's address) is only loaded from, or gives the address of a
    field of what it points to (`&(var_5->shape)`) that is itself only loaded from."""
    derived = st.derived.get(pointer, [])
    if st.uses[pointer] != st.assigned[pointer] + st.loads[pointer] + len(derived):
        return False
    return all(_only_loaded(st, q) for q in set(derived))


def _call_argument(forward: str, i: int) -> bool:
    """Whether position i of generated code is inside the argument list of a call to a generated function
    (`name_0(...)`, which decides for itself whether it copies), not of a Warp builtin (`wp::assign(...)`)."""
    depth = 0
    j = i - 1
    while j >= 0:
        c = forward[j]
        if c == ")":
            depth += 1
        elif c == "(":
            if depth == 0:
                return re.search(r"(?<![:\w])[A-Za-z_]\w*_\d+$", forward[:j]) is not None
            depth -= 1
        elif c in ";{}":
            return False
        j -= 1
    return False


def _mutated(forward: str | _Statements, name: str) -> bool:
    """Whether generated forward statements may change struct parameter `name` (`var_<label>`). Every use must be
    a field's address kept in a variable that is only loaded from (`var_3 = &((var_s).x); ... wp::load(var_3)`), a
    copy (`var_7 = var_s;`) or an argument of a generated function; anything else (`var_s.x = ...`,
    `wp::assign(var_s, ...)`, a pointer stored through) counts as a change."""
    st = forward if isinstance(forward, _Statements) else _Statements(forward)
    forward = st.text
    n = re.escape(name)
    for m in re.finditer(rf"(?<![\w.>])\b{n}\b", forward):
        i, j = m.start(), m.end()
        before, after = forward[max(i - 80, 0) : i], forward[j : j + 80]  # what the checks read: the neighbours
        if before.endswith("&((") and after.startswith(")."):
            continue  # a field's address: the pointers are checked below
        if re.match(r"\s*;", after) and re.search(r"\w = $", before):
            continue  # copied whole
        if re.search(r"[(,]\s*$", before) and re.match(r"\s*[,)]", after) and _call_argument(forward, i):
            continue  # a whole argument (not `&var_s`) of a generated function
        return True
    pointers = re.findall(rf"\b(var_\w+) = &\(\({n}\)\.\w+\);", forward)
    if len(pointers) != len(re.findall(rf"&\(\({n}\)\.", forward)):
        return True  # the address of a field that is not kept in a variable
    return not all(_only_loaded(st, p) for p in set(pointers))


def by_reference(source: str, c_func_name: str, params: list[tuple[str, str]]) -> str:
    """`source` (a function's generated forward and adjoint code) with each struct parameter (ctype, name) that
    the forward code does not change declared as a reference."""
    adjoint = re.search(rf"(?<![\w]){re.escape('adj_' + c_func_name)}\(", source)  # not `my_adj_f_0(`
    forward = source if adjoint is None else source[: adjoint.start()]
    start = forward.find("// forward")  # the statements, after the variables' declarations
    if start < 0:
        return source  # not the code this was written for: the copies stay
    statements = _Statements(forward[start:])
    for ctype, name in params:
        if not _mutated(statements, name):
            decl = re.compile(rf"(?<![\w:]){re.escape(ctype)} {re.escape(name)}(?=[,)\n])")
            source = decl.sub(f"{ctype}& __restrict__ {name}", source)
    return source


def _wrap() -> bool:
    """Wrap Warp's function code generator; False (nothing wrapped) where it is not the one this was written for."""
    try:
        from warp._src import codegen
    except ImportError:
        return False
    original = getattr(codegen, "codegen_func", None)
    struct_type = getattr(codegen, "Struct", None)
    is_reference = getattr(codegen, "is_reference", None)
    if original is None or struct_type is None or is_reference is None or _RULE is None:
        return False
    if getattr(original, "_artic_struct_refs", False):
        return True
    try:
        names = list(inspect.signature(original).parameters)
    except (TypeError, ValueError):
        return False
    if names[:4] != ["adj", "c_func_name", "device", "options"] or "reverse_only" not in names:
        return False

    def codegen_func(adj, c_func_name, device="cpu", options=None, *args, **kwargs):
        source = original(adj, c_func_name, device, options, *args, **kwargs)
        if not (options or {}).get(OPTION) or kwargs.get("reverse_only"):
            return source  # a reverse-only pass has no forward code to read: its copies stay
        if any(is_reference(a.type) for a in adj.args):
            return source  # a wp.ref parameter may point into a struct it also gets: all copies stay
        params = [(a.ctype(), a.emit()) for a in adj.args if isinstance(a.type, struct_type)]
        return by_reference(source, c_func_name, params) if params else source

    codegen_func._artic_struct_refs = True
    codegen.codegen_func = codegen_func
    return True


def active() -> bool:
    """Whether struct parameters are passed by reference in the modules that opt in."""
    return _active


def opt_in(module: object) -> None:
    """Compile the kernels of `module` (a module's __name__, or a Warp module) with struct references, where this
    Warp allows it."""
    if _active:
        wp.set_module_options({OPTION: _RULE}, module)


_active = _wrap()

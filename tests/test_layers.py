"""The package's layout as docs/design.md draws it: every import of every module (top-level or inside a function)
goes down the layers or stays within its own package, no two modules import each other through any chain, no
module is longer than 800 lines and no function longer than 120 without a reason. Imports under
`if TYPE_CHECKING:` name types for annotations only and are not imports at run time: they are left out."""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "artic"

# (module prefix, layer): the longest prefix gives a module's layer; docs/design.md's map shows the same
LAYERS = {
    "artic.errors": 0,
    "artic.enums": 0,
    "artic.math": 1,
    "artic.io.mesh_file": 1,  # a Mesh shape reads its file when it is made (description layer)
    "artic.description": 2,
    "artic.core": 3,
    "artic.collision": 4,
    "artic.dynamics": 4,
    "artic.constraints": 5,
    "artic.solvers": 6,
    "artic.sim": 7,
    "artic.io": 8,
    "artic.mocap": 8,
    "artic.assets": 9,
    "artic.interop": 10,
    "artic.viewer": 10,
    "artic.distributed": 10,  # Ray tasks over user functions; imports no other layer-10 package
    "artic.cli": 11,
    "artic.__main__": 12,  # python -m artic
    "artic": 12,  # artic/__init__.py, the public API
}
MAX_MODULE_LINES = 800
MAX_FUNCTION_LINES = 120
LONG_REASON = "# long function:"  # a comment inside a longer function that says why it is not split


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _group(module: str) -> str:
    return max((p for p in LAYERS if module == p or module.startswith(p + ".")), key=len)


def _type_only(tree: ast.Module) -> set[int]:
    """ids of the import statements under `if TYPE_CHECKING:`: names for annotations, not imports at run time."""
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            ids.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return ids


def _imports(module: str) -> set[str]:
    """The artic modules `module` imports at run time, anywhere in its source (also inside functions)."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found = set()
    tree = ast.parse(path.read_text())
    type_only = _type_only(tree)
    for node in ast.walk(tree):
        if id(node) in type_only:
            continue
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "artic")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            if target.split(".")[0] != "artic":
                continue
            for alias in node.names:  # `from . import status` names a module
                found.add(f"{target}.{alias.name}" if f"{target}.{alias.name}" in MODULES else target)
    return {m for m in found if m != module}


GRAPH = {m: _imports(m) for m in MODULES}


def test_every_module_has_a_layer():
    """Each module falls under one entry of LAYERS (a new top-level package must be placed on the map)."""
    for module in MODULES:
        assert _group(module) != "artic" or module == "artic", f"{module} is on no layer of docs/design.md's map"


def test_imports_go_down_the_layers():
    """A module imports only modules of lower layers, or of its own package group."""
    climbs = []
    for module, targets in GRAPH.items():
        group = _group(module)
        for target in targets:
            if target not in MODULES:
                continue
            other = _group(target)
            if other != group and LAYERS[other] >= LAYERS[group]:
                climbs.append(f"{module} (layer {LAYERS[group]}) imports {target} (layer {LAYERS[other]})")
    assert not climbs, "imports that climb or cross the layers:\n" + "\n".join(climbs)


def _cycles(graph: dict) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_no_import_cycles():
    """No chain of imports leads from a module back to itself."""
    assert not _cycles(GRAPH), f"import cycles: {_cycles(GRAPH)}"


def test_the_cycle_finder_finds_cycles():
    """The checks above can fail: a planted cycle and a planted climbing import are found."""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _group("artic.io.mesh_file") == "artic.io.mesh_file" and _group("artic.io.urdf") == "artic.io"
    assert LAYERS[_group("artic.sim.scene")] > LAYERS[_group("artic.core.model")]
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from x import y\nimport z\n")
    assert {type(n).__name__ for n in ast.walk(tree) if id(n) in _type_only(tree)} >= {"ImportFrom"}
    assert not any(isinstance(n, ast.Import) and id(n) in _type_only(tree) for n in ast.walk(tree))


@pytest.mark.parametrize("module", sorted(MODULES))
def test_module_and_function_sizes(module):
    """Modules stay under MAX_MODULE_LINES; a function over MAX_FUNCTION_LINES says why in a LONG_REASON comment."""
    source = MODULES[module].read_text()
    assert source.count("\n") <= MAX_MODULE_LINES, f"{module}: {source.count(chr(10))} lines; split it by concept"
    lines = source.splitlines()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = node.end_lineno - node.lineno + 1
            body = "\n".join(lines[node.lineno - 1 : node.end_lineno])
            assert length <= MAX_FUNCTION_LINES or LONG_REASON in body, (
                f"{module}.{node.name}: {length} lines without a '{LONG_REASON}' comment"
            )


def test_design_map_matches_the_package():
    """docs/design.md's map names every folder and top-level module of artic/, and nothing that is not there."""
    text = (ROOT / "docs" / "design.md").read_text()
    section = text[text.index("## Layout") :]
    section = section[: section.index("\n## ", 1)]
    named = set(re.findall(r"`artic/([a-z_]+)(?:/|\.py)`", section)) - {"__init__"}
    present = {
        p.name if p.is_dir() else p.stem
        for p in PACKAGE.iterdir()
        if (p.is_dir() and (p / "__init__.py").exists()) or (p.suffix == ".py" and p.stem != "__init__")
    }
    assert named == present, f"map only: {sorted(named - present)}; package only: {sorted(present - named)}"


def test_group_lookup_covers_the_layer_table():
    """Every LAYERS entry is a module or package that exists."""
    missing = [p for p in LAYERS if p not in MODULES]
    assert not missing, f"LAYERS names what does not exist: {missing}"


def test_public_names_and_documented_paths_still_work():
    """Every name in artic.__all__ resolves, and the module paths documented before the layout (artic.status,
    artic.gym_env, artic.torch_views) are the same module objects as their new homes, by import and by attribute."""
    import importlib

    import artic

    missing = [name for name in artic.__all__ if not hasattr(artic, name)]
    assert not missing, f"artic.__all__ names what artic lacks: {missing}"
    for old, new, needs in (
        ("artic.status", "artic.sim.status", None),
        ("artic.gym_env", "artic.interop.gym_env", "gymnasium"),
        ("artic.torch_views", "artic.interop.torch_views", "torch"),
    ):
        if needs is not None and importlib.util.find_spec(needs) is None:
            continue
        assert importlib.import_module(old) is importlib.import_module(new)
        assert getattr(artic, old.split(".")[1]) is importlib.import_module(new)
    from artic.status import FINITE_LIMIT  # noqa: F401  (a `from` import through the alias)

    with pytest.raises(AttributeError):
        artic.not_a_module  # noqa: B018


def _untyped(tree: ast.Module) -> list[str]:
    """Public functions and methods (not starting with an underscore, in public classes, __init__ included) with a
    parameter or return value without a type hint (self and cls, __init__'s return and property setters aside)."""
    found = []

    def check(node: ast.FunctionDef, owner: str, method: bool):
        args = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
        static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list)
        if method and not static and args and args[0].arg in ("self", "cls"):
            args = args[1:]
        missing = [a.arg for a in args if a.annotation is None]
        missing += [f"*{a.arg}" for a in (node.args.vararg, node.args.kwarg) if a is not None and a.annotation is None]
        setter = any(isinstance(d, ast.Attribute) and d.attr in ("setter", "deleter") for d in node.decorator_list)
        if node.returns is None and node.name != "__init__" and not setter:
            missing.append("return")
        if missing:
            found.append(f"{owner}{node.name}: {', '.join(missing)}")

    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_"):
            check(node, "", False)
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            for sub in node.body:
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
                    not sub.name.startswith("_") or sub.name == "__init__"
                ):
                    check(sub, f"{node.name}.", True)
    return found


def test_public_functions_have_type_hints():
    """Every public function and method of artic has a type hint on each parameter and on its return value; the
    check itself flags an untyped function."""
    assert _untyped(ast.parse("def f(x, y: int):\n    pass\n")) == ["f: x, return"]
    assert _untyped(ast.parse("class A:\n    def __init__(self, x: int):\n        pass\n")) == []
    missing = [f"{m}: {u}" for m, p in MODULES.items() for u in _untyped(ast.parse(p.read_text()))]
    assert not missing, "public functions without type hints:\n" + "\n".join(missing)

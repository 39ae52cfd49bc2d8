"""Where a step's time goes, by function of the compiled step kernel: runs a scene under Linux `perf record` and maps
the samples that fall in Warp's JIT-loaded CPU code to the functions of the kernel's object file.

Warp loads its CPU kernels into anonymous memory, where `perf` sees addresses without names. The object file Warp
compiled them from (its kernel cache) still holds every function that the compiler did not inline, with its offset;
the kernel entry's runtime address (Warp's kernel hooks) gives the base, and each sample maps to the function whose
range holds it. Functions the compiler inlined count in their caller (most of the dynamics and the integration land
in the kernel body, `_make_step__locals___step..._cpu_kernel_forward`). Samples outside the JIT code (Python, NumPy,
the C library) are named by `perf` itself. A last line gives the share of samples on `rep movs`: the copies of the
structs that Warp passes by value to the functions the compiler did not inline (the Gymnasium pusher: 5.8 %, the
dm dog: 0.5 %).

Scenes: bench_robots.py's MJCF scenes (by their names there, e.g. "fetch pick_and_place") or bench_solvers.py's
(panda, humanoid, allegro, four_bar), stepped for --seconds of wall time after a warm-up, one env unless --envs,
with the MJCF file's solver (`model.solver_type`; PGS for bench_solvers' scenes) unless --solver.

    python -m benchmarks.profile_step "dm dog" [--seconds 10] [--envs 1] [--solver file] [--top 25]
        [--hot solve_contacts]

Needs `perf` (linux-tools) with permission to sample this process (kernel.perf_event_paranoid <= 2); relies on
Warp 1.19's private module objects (warp._src.context), so a later Warp may need this script adjusted.
"""

from __future__ import annotations

import argparse
import bisect
import collections
import ctypes
import glob
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path


def _scene(name: str, envs: int, solver: str):
    """(scene, dt) of a bench_robots or bench_solvers scene."""
    import artic

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from benchmarks import bench_robots, bench_solvers

        if name in bench_solvers.SCENES:
            b = bench_solvers.SCENES[name](envs, artic.SolverType[solver if solver != "file" else "PGS"])
            return b.scene, b.dt
        model = artic.load_mjcf(bench_robots._scenes()[name])
    kind = model.solver_type if solver == "file" else artic.SolverType[solver]
    scene = artic.Scene(envs, gravity=model.gravity, solver_type=kind)
    model.add_to(scene)
    return scene, model.timestep


def _kernel_base() -> tuple[int, str]:
    """(runtime address of offset 0 of the step kernel's object file, that file's path)."""
    import warp._src.context as context

    from artic.sim import step_kernel

    module = context.get_module("artic.sim.step_kernel")
    loaded = next(e for e in module.execs.values() if e is not None)
    kernel = module.kernels[step_kernel._step.key]  # made by a factory (step_kernel._make_step)
    entry = ctypes.cast(loaded.get_kernel_hooks(kernel).forward, ctypes.c_void_p).value
    symbol = kernel.get_mangled_name() + "_cpu_forward"
    import warp

    roots = [warp.config.kernel_cache_dir]  # set by wp.init()
    for root in roots:
        for obj in sorted(glob.glob(f"{root}/wp_artic.sim.step_kernel_*/*.o"), key=os.path.getmtime, reverse=True):
            names = subprocess.run(["nm", obj], capture_output=True, text=True).stdout.splitlines()
            hit = [line.split()[0] for line in names if line.endswith(" " + symbol)]
            if hit:
                return entry - int(hit[0], 16), obj
    raise RuntimeError(f"no object file in {roots} holds {symbol}")


def _functions(obj: str) -> list[tuple[int, int, str]]:
    """(offset, size, demangled name without arguments) of the object's functions, by offset."""
    out = []
    for line in subprocess.run(["nm", "-S", "-C", obj], capture_output=True, text=True).stdout.splitlines():
        parts = line.split(None, 3)
        if len(parts) == 4 and parts[2] in "tT":
            out.append((int(parts[0], 16), int(parts[1], 16), parts[3].split("(")[0]))
    return sorted(out)


def target(args) -> None:
    """The profiled process: build, warm up, print the base, step for args.seconds."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    scene, dt = _scene(args.scene, args.envs, args.solver)
    for _ in range(20):
        scene.step(dt)
    base, obj = _kernel_base()
    print(f"BASE {base:#x} {obj}", flush=True)
    sys.stdin.readline()  # perf is attached: step
    start, steps = time.perf_counter(), 0
    while time.perf_counter() - start < args.seconds:
        scene.step(dt)
        steps += 1
    print(f"STEPS {steps} {1e6 * (time.perf_counter() - start) / steps / args.envs:.1f}", flush=True)
    sys.stdin.readline()  # perf has stopped: exit (the interpreter's exit, a large collection, is not sampled)


def report(out: str, data: str, top: int, hot: str | None = None) -> None:
    base = obj = None
    for line in out.splitlines():
        if line.startswith("BASE "):
            base, obj = int(line.split()[1], 16), line.split()[2]
        if line.startswith("STEPS "):
            steps, us = line.split()[1:3]
    if base is None:
        raise SystemExit(f"the profiled run printed no kernel base:\n{out[-2000:]}")
    funcs = _functions(obj)
    starts = [f[0] for f in funcs]
    samples = subprocess.run(["perf", "script", "-i", data, "-F", "ip,sym,dso"], capture_output=True, text=True)
    counts, total = collections.Counter(), 0
    for line in samples.stdout.splitlines():
        parts = line.split()
        if not parts:
            continue
        total += 1
        off = int(parts[0], 16) - base
        k = bisect.bisect_right(starts, off) - 1
        if k >= 0 and off < funcs[k][0] + funcs[k][1]:
            counts["kernel: " + funcs[k][2]] += 1
        else:
            counts[" ".join(parts[1:2]) or "unknown"] += 1
    print(f"{steps} steps, {us} us per env-step under perf; {total} samples")
    print("| share | where |\n|---:|---|")
    for name, n in counts.most_common(top):
        print(f"| {100 * n / total:.1f} % | {name[:110]} |")
    copies = _struct_copies(samples.stdout, base, obj)
    print(f"\n{100 * copies / max(total, 1):.1f} % of the samples on `rep movs` (structs passed by value)")
    if hot:
        _hot_blocks(samples.stdout, base, obj, funcs, hot)


def _struct_copies(samples: str, base: int, obj: str) -> int:
    """Samples on the kernels' `rep movs` instructions: Warp passes structs by value, and a call the compiler did not
    inline copies its struct arguments onto the stack."""
    asm = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "-j", ".ltext", obj], capture_output=True, text=True)
    at = {int(line.split(":")[0], 16) for line in asm.stdout.splitlines() if "rep movs" in line and ":" in line}
    n = 0
    for line in samples.splitlines():
        parts = line.split()
        if parts and int(parts[0], 16) - base in at:
            n += 1
    return n


def _hot_blocks(samples: str, base: int, obj: str, funcs: list, name: str, blocks: int = 8) -> None:
    """The hottest 64-byte blocks of function `name` (a prefix of its demangled name) and the disassembly of the
    hottest one: where inside an inlined function the time goes."""
    start, size, full = next(f for f in funcs if f[2].startswith(name))
    counts = collections.Counter()
    for line in samples.splitlines():
        parts = line.split()
        off = int(parts[0], 16) - base if parts else -1
        if start <= off < start + size:
            counts[(off - start) // 64 * 64] += 1
    inside = sum(counts.values()) or 1
    print(f"\n{full}: {size} bytes; its hottest 64-byte blocks:")
    for off, n in counts.most_common(blocks):
        print(f"  +{off:#07x}  {100 * n / inside:5.1f} %")
    first = start + counts.most_common(1)[0][0]
    asm = subprocess.run(
        ["objdump", "-d", "--no-show-raw-insn", "-M", "intel", f"--start-address={first}",
         f"--stop-address={first + 64}", "-j", ".ltext", obj],
        capture_output=True, text=True,
    ).stdout  # fmt: skip
    print("\n".join(line for line in asm.splitlines() if line.startswith("   ")))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("scene")
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--envs", type=int, default=1)
    p.add_argument("--solver", default="file", choices=("file", "PGS", "TGS", "DIRECT"), help="file: an MJCF's own")
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--hot", help="also the hottest blocks of this kernel function (a prefix of its name)")
    p.add_argument("--target", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.target:
        return target(args)
    if shutil.which("perf") is None or shutil.which("nm") is None:
        raise SystemExit("profile_step needs `perf` and `nm` (apt install linux-perf binutils)")
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "perf.data")
        cmd = [sys.executable, "-m", "benchmarks.profile_step", *sys.argv[1:], "--target"]
        root = Path(__file__).resolve().parents[1]
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=root)
        lines = [proc.stdout.readline()]  # the scene is built and warm: sample only its steps
        while lines[-1] and not lines[-1].startswith("BASE "):
            lines.append(proc.stdout.readline())
        perf = subprocess.Popen(
            ["perf", "record", "-F", "2000", "-o", data, "-p", str(proc.pid)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(1.0)  # perf attaches
        proc.stdin.write("\n")
        proc.stdin.flush()
        lines.append(proc.stdout.readline())  # STEPS: the stepping is over
        perf.send_signal(signal.SIGINT)
        perf.wait(timeout=60)
        proc.communicate("\n")
        if proc.returncode != 0 or not os.path.exists(data):
            raise SystemExit(f"the profiled run or perf failed:\n{perf.stderr.read()[-2000:]}")
        report("".join(lines), data, args.top, args.hot)


if __name__ == "__main__":
    main()

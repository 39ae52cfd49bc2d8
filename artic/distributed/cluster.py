"""`LocalCluster`: a real Ray cluster on this machine, a head node and more worker nodes, each its own
``ray start --block`` process on the loopback address; what the tests, the benchmark and a first try of
`map_scenes` on "a cluster" use without one. A multi-node cluster is started the same way by hand (docs/distributed.md):
``ray start --head`` on one machine, ``ray start --address HEAD:PORT`` on the others.

The nodes' processes get this artic on their PYTHONPATH (and any extra paths given), so that Ray workers import
the same code as the caller. Stopping the cluster stops its node processes and nothing else of Ray on the machine.
It runs without Ray's token authentication unless this process has RAY_AUTH_MODE=token (its nodes and the drivers
in this process must agree), as a cluster for one machine's tests and trials; a cluster that others can reach
should follow Ray's security guide (token authentication, a private network).
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..errors import ArticError, ValidationError

__all__ = ["LocalCluster"]

_START_TIMEOUT = 60.0  # [s] for a node to join
_LOOPBACK = "127.0.0.1"


class LocalCluster:
    """A Ray cluster of `nodes` nodes (the first the head) with `cpus_per_node` CPUs each, on 127.0.0.1; a context
    manager (started on enter, stopped on exit). `address` is what `map_scenes` and `ray.init` take."""

    def __init__(self, nodes: int = 2, cpus_per_node: int = 1, python_path: list[str] | None = None):
        if isinstance(nodes, bool) or not isinstance(nodes, int) or nodes < 1:
            raise ValidationError(f"LocalCluster: nodes must be a positive integer, got {nodes!r}")
        if isinstance(cpus_per_node, bool) or not isinstance(cpus_per_node, int) or cpus_per_node < 1:
            raise ValidationError(f"LocalCluster: cpus_per_node must be a positive integer, got {cpus_per_node!r}")
        self.nodes, self.cpus_per_node = nodes, cpus_per_node
        root = str(Path(__file__).resolve().parents[2])  # the folder that holds this artic package
        paths = [root, *(python_path or []), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
        # Ray's token authentication as this process has it (a driver here must match the nodes): on where
        # RAY_AUTH_MODE=token (a local `ray.init()` sets it), else off explicitly, for `ray start` would turn it on
        # by itself when a token file of an earlier `ray.init()` exists, and this process could then not connect
        self._env = dict(
            os.environ,
            PYTHONPATH=os.pathsep.join(dict.fromkeys(paths)),
            RAY_USAGE_STATS_ENABLED="0",
            RAY_AUTH_MODE=os.environ.get("RAY_AUTH_MODE", "disabled"),
        )
        self._processes: list[subprocess.Popen] = []
        self._logs: list = []  # each node's output
        self.address: str | None = None

    def __enter__(self) -> LocalCluster:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> str:
        """Start the head and the other nodes; wait until all have joined. Returns the address."""
        script = Path(sys.executable).parent / "ray"  # the `ray` command of this interpreter, whatever PATH holds
        if importlib.util.find_spec("ray") is None or not script.is_file():
            raise ArticError("LocalCluster: Ray is not installed; pip install 'artic[ray]'")
        ray = [str(script)]
        port = _free_port()
        self.address = f"{_LOOPBACK}:{port}"
        common = [f"--num-cpus={self.cpus_per_node}", "--object-store-memory=100000000", "--disable-usage-stats"]
        head = [*ray, "start", "--block", "--head", f"--node-ip-address={_LOOPBACK}", f"--port={port}"]
        head += ["--include-dashboard=false", *common]
        self._spawn(head)
        self._wait_for_nodes(1)  # a node joins a head that answers
        worker = [*ray, "start", "--block", f"--address={self.address}", f"--node-ip-address={_LOOPBACK}", *common]
        for _ in range(self.nodes - 1):
            self._spawn(worker)
        self._wait_for_nodes(self.nodes)
        return self.address

    def _spawn(self, command):
        log = tempfile.TemporaryFile()  # noqa: SIM115 - kept open while the node runs; read back if it fails
        # a session of its own: its raylet and workers can be killed together if it does not stop
        proc = subprocess.Popen(command, env=self._env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        self._processes.append(proc)
        self._logs.append(log)

    def _wait_for_nodes(self, count):
        deadline = time.monotonic() + _START_TIMEOUT
        while True:
            dead = [k for k, p in enumerate(self._processes) if p.poll() is not None]
            if dead:
                log = self._logs[dead[0]]
                log.seek(0)
                tail = log.read().decode(errors="replace").strip().splitlines()[-5:]
                self.stop()
                raise ArticError(
                    "LocalCluster: a node process ended while starting: " + " | ".join(tail) + " (see `ray status`)"
                )
            alive = self._count_nodes()
            if alive >= count:
                return
            if time.monotonic() > deadline:
                self.stop()
                raise ArticError(f"LocalCluster: {alive} of {count} nodes joined in {_START_TIMEOUT:g} s")
            time.sleep(0.5)

    def _count_nodes(self) -> int:
        """The cluster's live nodes, asked by a short driver of its own (so that this process stays free to join
        the cluster or not); 0 while the head is not up."""
        probe = (
            f"import ray; ray.init(address={self.address!r}, log_to_driver=False, logging_level='ERROR'); "
            "print(sum(n['Alive'] for n in ray.nodes()))"
        )
        try:
            out = subprocess.run(
                [sys.executable, "-c", probe], env=self._env, capture_output=True, text=True, timeout=_START_TIMEOUT
            )
        except subprocess.TimeoutExpired:
            return 0
        lines = out.stdout.split()
        return int(lines[-1]) if out.returncode == 0 and lines and lines[-1].isdigit() else 0

    def stop(self) -> None:
        """Stop every node of this cluster: `ray start --block` stops its node's processes when terminated (within
        seconds); a node still running after 20 s has its process session killed. Nothing else of Ray is touched."""
        for proc in self._processes:
            if proc.poll() is None:
                proc.terminate()
        for proc in self._processes:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        self._processes.clear()
        for log in self._logs:
            log.close()
        self._logs.clear()
        self.address = None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((_LOOPBACK, 0))
        return s.getsockname()[1]

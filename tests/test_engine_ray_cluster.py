"""The Ray engine on a two-node cluster: a head and a second node started with ``ray start`` on this machine,
each with its own CPU, custom resource (``node1``/``node2``) and temp folder, and ``figlink ingest --engine ray
--address`` run against it as a user would. The corpus equals the local engine's, and tasks ran on both nodes.

The cluster uses Ray's token authentication with a token of its own (so it neither needs nor touches a
``~/.ray`` token), and is stopped by the ids of the processes it started. Skipped without Ray.
"""

from __future__ import annotations

import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest

from conftest import corpus_content
from figlink.engine.local import ingest as ingest_local
from figlink.pipeline import PipelineOptions

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "samples"
RAY_CLI = Path(sys.executable).with_name("ray")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop(proc: subprocess.Popen) -> None:
    """Stop a ``ray start --block`` process and every process under it (by their ids)."""
    import psutil

    try:
        procs = [psutil.Process(proc.pid)] + psutil.Process(proc.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return
    for p in procs:
        try:
            p.send_signal(signal.SIGTERM)
        except psutil.Error:
            pass
    _, alive = psutil.wait_procs(procs, timeout=15)
    for p in alive:
        try:
            p.kill()
        except psutil.Error:
            pass


def _started(log: Path, proc: subprocess.Popen, timeout: float = 90.0) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if "Ray runtime started" in log.read_text(errors="replace"):
            return
        if proc.poll() is not None:
            break
        time.sleep(0.5)
    raise RuntimeError(f"ray start failed: {log.read_text(errors='replace')[-2000:]}")


@pytest.fixture(scope="module")
def two_nodes(tmp_path_factory) -> Iterator[tuple[str, dict]]:
    """A head (1 CPU, resource node1) and a second node (1 CPU, resource node2): (address, environment)."""
    pytest.importorskip("ray")
    if not RAY_CLI.exists():
        pytest.skip("the ray command is not installed")
    base = tmp_path_factory.mktemp("ray2")
    token = base / "token"
    token.write_text(secrets.token_hex(32))
    token.chmod(0o600)
    env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token),
           "RAY_USAGE_STATS_ENABLED": "0", "FIGLINK_TORCH_THREADS": "1",
           "PYTHONPATH": str(REPO / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    port = _free_port()
    address = f"127.0.0.1:{port}"
    common = ["--block", "--num-cpus", "1", "--num-gpus", "0", "--object-store-memory", "100000000",
              "--disable-usage-stats"]
    started: list[subprocess.Popen] = []
    try:
        for name, args in (("head", ["--head", "--node-ip-address", "127.0.0.1", "--port", str(port),
                                     "--include-dashboard", "false", "--resources", '{"node1": 1}']),
                           ("node2", ["--address", address, "--resources", '{"node2": 1}'])):
            log = base / f"{name}.log"
            with log.open("w") as out:
                proc = subprocess.Popen([str(RAY_CLI), "start", *args, *common, "--temp-dir", str(base / name)],
                                        stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
            started.append(proc)
            _started(log, proc)
        yield address, env
    finally:
        for proc in reversed(started):
            _stop(proc)


def test_ingest_on_two_nodes_builds_the_local_corpus_with_tasks_on_both(two_nodes, tmp_path):
    address, env = two_nodes
    # the PDF (merged with its XML) first: it keeps one node's CPU busy for seconds, so the JATS articles after
    # it run on the other node whatever order the nodes' first workers start in
    sources = [SAMPLES / "elife", SAMPLES / "jats"]
    corpus = tmp_path / "ray"
    res = subprocess.run([sys.executable, "-m", "figlink.cli", "ingest", *map(str, sources), "--corpus", str(corpus),
                          "--engine", "ray", "--address", address, "--no-vision", "--no-index"],
                         capture_output=True, text=True, env=env, timeout=600)
    assert res.returncode == 0, res.stderr
    assert "8 ingested, 0 already done, 0 failed" in res.stderr
    placed = re.search(r"tasks per node \((\d+) nodes\): (.*)", res.stderr)
    assert placed is not None, res.stderr
    counts = [int(n) for n in re.findall(r": (\d+)", placed.group(2))]
    assert placed.group(1) == "2" and len(counts) == 2 and min(counts) >= 1 and sum(counts) == 8, res.stderr

    local = tmp_path / "local"
    report = ingest_local(sources, local, workers=1, options=PipelineOptions(vision=False), progress=False)
    assert (report.ok, report.failed) == (8, 0)
    a, b = corpus_content(local), corpus_content(corpus)
    assert b["papers"] == a["papers"] and b["paper_cols"] == a["paper_cols"]
    assert b["figures"] == a["figures"] and b["inputs"] == a["inputs"] and b["errors"] == a["errors"] == []
    assert b["images"] == a["images"] and len(b["images"]) > 0  # crops written by workers of either node

"""The Ray engine: the same tasks as the local engine, run as Ray tasks; one writer (the driver).

Ray tasks parse and enrich (:func:`~figlink.engine.common.run_task`, the code the local engine runs);
the driver — the process that calls :func:`ingest` — plans the run, keeps a bounded number of tasks in
flight, takes their results as they complete (``ray.wait``) and commits them to the corpus in small
transactions (:func:`~figlink.engine.common.run_ingest`, shared with the local engine). So the corpus,
the error records, the resumability by content hash and the progress bar are those of the local engine.

Ray is an optional dependency (``pip install 'figlink[ray]'``). :func:`ray_session` decides where the
tasks run: an already-initialized Ray is reused as it is; an address (the ``address`` argument, else
``RAY_ADDRESS``) is connected to; otherwise a local Ray with ``workers`` CPUs is started for the run and
shut down after it. That local instance listens on the loopback interface only, sends no usage
statistics, has no dashboard and keeps its logs out of the terminal.

On a cluster of several machines, the workers read the sources and write figure images under the
corpus folder by path: both must be on a file system every node mounts at the same path, and figlink
must be installed on every node.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
from dataclasses import replace
from pathlib import Path
from typing import Any, Iterable, Iterator, Optional

from figlink.engine.common import EngineError, IngestReport, Result, Runner, Task, run_ingest, run_task
from figlink.engine.pool import window
from figlink.pipeline import PipelineOptions

INSTALL_HINT = "pip install 'figlink[ray]'"
IN_FLIGHT_PER_CPU = 2  # tasks submitted per CPU of the cluster: enough to keep workers busy, memory flat
MAX_CALLS_PER_WORKER = 200  # a worker process is replaced after this many tasks (as the local pool's)
CONNECT_TIMEOUT_S = 5.0  # a cluster address that does not answer within this fails at once


class RayEngineError(EngineError):
    """Ray is missing, or the cluster cannot be started or reached (a one-line reason)."""


def import_ray() -> Any:
    """The ``ray`` module, or a :class:`RayEngineError` that says how to install it."""
    try:
        import ray
    except ImportError as e:
        raise RayEngineError(f"the ray engine needs Ray (not installed): {INSTALL_HINT}") from e
    return ray


def _no_api_server(*args: Any, **kwargs: Any) -> tuple[None, None]:
    return None, None


@contextlib.contextmanager
def _local_only(ray: Any) -> Iterator[None]:
    """While a local Ray starts: keep every Ray process on the loopback interface and off the network.

    - Ray picks the node's address by asking the OS for the route to a public address and listens on
      that interface; with ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` (read by the Ray processes started
      now) and the driver's copy of that setting off, it uses 127.0.0.1, as it does on a laptop.
    - ``RAY_USAGE_STATS_ENABLED`` is set to 0 unless the user set it.
    - With the dashboard off, Ray still starts an API server process whose only module is the usage
      statistics reporter, and that reporter asks the cloud metadata addresses (169.254.169.254,
      metadata.google.internal) which cloud it runs on even when reporting is disabled. This engine does
      not start that process; tasks, objects and logs do not use it.

    Everything is restored afterwards (the processes already started keep their settings). Where a
    Ray version lacks one of these internals, that step is skipped and Ray starts as it would.
    """
    saved_env = {k: os.environ.get(k) for k in ("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "RAY_USAGE_STATS_ENABLED")}
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    private = getattr(ray, "_private", None)
    saved_attrs: list[tuple[Any, str, Any]] = []
    for module, name, value in ((getattr(private, "ray_constants", None), "ENABLE_RAY_CLUSTER", False),
                                (getattr(private, "services", None), "start_api_server", _no_api_server)):
        if module is not None and hasattr(module, name):
            saved_attrs.append((module, name, getattr(module, name)))
            setattr(module, name, value)
    try:
        yield
    finally:
        for module, name, value in saved_attrs:
            setattr(module, name, value)
        for k, v in saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def start_local_ray(ray: Any, num_cpus: int) -> None:
    """Start a local Ray instance with ``num_cpus`` CPUs: loopback only, no dashboard, quiet."""
    with _local_only(ray):
        ray.init(address="local", num_cpus=max(1, num_cpus), num_gpus=0, include_dashboard=False,
                 logging_level=logging.ERROR, log_to_driver=False)


def _check_reachable(ray: Any, address: str) -> None:
    """Raise ``ConnectionError`` when nothing listens at a ``host:port`` cluster address: Ray itself would
    retry for many minutes. Ray client (``ray://``) addresses are left to Ray."""
    if "://" in address:
        return
    try:  # the address Ray will dial ("auto" read from this machine's last cluster, localhost resolved)
        target = ray._private.services.canonicalize_bootstrap_address(address) or ""
    except AttributeError:
        target = address
    host, _, port = target.rpartition(":")
    if not host or not port.isdigit():
        return  # let Ray say what is wrong with it
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as e:
        raise ConnectionError(f"nothing answers at {target} ({e.strerror or type(e).__name__})") from e


@contextlib.contextmanager
def ray_session(workers: int = 1, address: Optional[str] = None) -> Iterator[Any]:
    """Yield ``ray``, connected: the Ray already initialized in this process (left running), else a
    connection to ``address`` or ``$RAY_ADDRESS`` (closed afterwards), else a local Ray with ``workers``
    CPUs (shut down afterwards)."""
    ray = import_ray()
    if ray.is_initialized():
        yield ray
        return
    address = address or os.environ.get("RAY_ADDRESS") or None
    try:
        if address and address != "local":
            _check_reachable(ray, address)
            ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False)
        else:
            start_local_ray(ray, workers)
    except Exception as e:
        with contextlib.suppress(Exception):
            ray.shutdown()
        where = f"connect to Ray at {address}" if address and address != "local" else "start a local Ray"
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise RayEngineError(f"could not {where}: {msg}") from e
    try:
        yield ray
    finally:
        ray.shutdown()


def _run_remote(task: Task) -> Result:
    """Body of the Ray task (a module-level function, so workers import it rather than unpickle code); the
    result names the node it ran on."""
    import ray

    return replace(run_task(task), node=ray.get_runtime_context().get_node_id())


def _absolute(task: Task) -> Task:
    """The task with absolute paths: a Ray worker's working folder is not the driver's."""
    return replace(task, path=os.path.abspath(task.path), xml=None if task.xml is None else os.path.abspath(task.xml),
                   staging=os.path.abspath(task.staging))


def _failure(ray: Any, task: Task, e: BaseException) -> Result:
    """A result for a task that Ray could not run to the end (its worker died, it was killed for memory…)."""
    if isinstance(e, getattr(ray.exceptions, "OutOfMemoryError", ())):
        return Result(task, stage="internal", reason="out of memory")
    cause = getattr(e, "cause", None)
    err = cause if isinstance(cause, BaseException) else e
    text = str(err).strip()
    line = text.splitlines()[0] if text else ""
    return Result(task, stage="internal", reason=f"{type(err).__name__}: {line}" if line else type(err).__name__)


def ray_runner(ray: Any, max_in_flight: Optional[int] = None) -> Runner:
    """A runner that submits :func:`run_task` as Ray tasks, at most ``max_in_flight`` at a time (by default
    ``IN_FLIGHT_PER_CPU`` per CPU of the cluster) and at most :func:`~figlink.engine.pool.window` past the
    oldest result not yet yielded, and yields their results in task order."""
    # SPREAD: independent CPU-bound tasks go to every node of a cluster rather than filling the driver's
    # node first (Ray's default packs them there while it has room, and reuses its warm workers)
    remote = ray.remote(num_cpus=1, max_retries=1, max_calls=MAX_CALLS_PER_WORKER,
                        scheduling_strategy="SPREAD")(_run_remote)

    def run(tasks: Iterable[Task]) -> Iterator[Result]:
        cpus = int(ray.cluster_resources().get("CPU", 1)) or 1
        limit = max(1, max_in_flight or IN_FLIGHT_PER_CPU * cpus)
        ahead = max(limit, window(cpus))
        source = iter(tasks)
        in_flight: dict[Any, int] = {}  # object ref → task index
        taken: dict[int, Task] = {}  # task index → task, until its result is yielded
        done: dict[int, Result] = {}  # results waiting for an earlier task
        submitted = head = 0  # next task to submit; next task to yield
        ended = False
        try:
            while True:
                while not ended and len(in_flight) < limit and submitted - head < ahead:
                    nxt = next(source, None)
                    if nxt is None:
                        ended = True
                        break
                    taken[submitted] = nxt
                    in_flight[remote.remote(_absolute(nxt))] = submitted
                    submitted += 1
                if not in_flight:
                    break
                ready, _ = ray.wait(list(in_flight), num_returns=1)
                for ref in ready:
                    i = in_flight.pop(ref)
                    task = taken[i]
                    try:
                        out = ray.get(ref)
                        done[i] = Result(task, paper=out.paper, stage=out.stage, reason=out.reason, node=out.node)
                    except ray.exceptions.RayError as e:
                        done[i] = _failure(ray, task, e)
                while head in done:
                    del taken[head]
                    yield done.pop(head)
                    head += 1
        finally:
            for ref in in_flight:  # stopped early: do not leave work running on a cluster we do not own
                with contextlib.suppress(Exception):
                    ray.cancel(ref)

    return run


def ingest(sources: Iterable[str | Path], corpus_dir: str | Path, workers: int = 1,
           options: PipelineOptions = PipelineOptions(), progress: bool = True, address: Optional[str] = None,
           max_in_flight: Optional[int] = None) -> IngestReport:
    """Build or update the corpus at ``corpus_dir`` from ``sources`` with Ray; the same contract as
    :func:`figlink.engine.local.ingest`. ``workers`` is the number of CPUs of a local Ray started for the
    run; a Ray already initialized, ``address`` or ``$RAY_ADDRESS`` use that cluster's CPUs instead.
    Ray is started only when there is something to do. Raises :class:`RayEngineError` when Ray is not
    installed or cannot be started or reached."""
    import_ray()  # say so before any work when it is missing

    def runner(tasks: Iterable[Task]) -> Iterator[Result]:
        with ray_session(workers, address) as ray:
            yield from ray_runner(ray, max_in_flight)(tasks)

    return run_ingest(sources, corpus_dir, runner, options=options, progress=progress)

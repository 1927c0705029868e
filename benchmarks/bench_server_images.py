"""Server memory and latency when figure images are huge: panel crops and whole images of an 18000 x 9000 RGB
figure (8 concurrent requests, cold and then warm) and of a 20000 x 10000 one (past PIL's bomb limit).

Runs ``figlink serve`` in a child process on a corpus of one synthetic paper and samples the child's RSS
every 20 ms. Needs no shared data. Run it with another checkout first on PYTHONPATH to measure that code
(the "before" numbers); a server past ``--kill-gb`` is stopped and reported as such.

    PYTHONPATH=src python benchmarks/bench_server_images.py [--workdir DIR] [--kill-gb 10]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

SIZES = {"big": (18000, 9000), "bomb": (20000, 10000)}
GRID = (4, 2)  # panels a..h: 4 columns, 2 rows


def make_image(path: Path, size: tuple[int, int]) -> None:
    """An RGB PNG with a coloured, outlined cell per panel (written once, reused)."""
    from PIL import Image, ImageDraw

    if path.exists():
        return
    im = Image.new("RGB", size, "white")
    d = ImageDraw.Draw(im)
    cols, rows = GRID
    w, h = size[0] // cols, size[1] // rows
    for i in range(cols * rows):
        x, y = (i % cols) * w, (i // cols) * h
        d.rectangle([x + 40, y + 40, x + w - 40, y + h - 40], fill=(40 * i % 256, 90, 200 - 20 * i), outline="black",
                    width=12)
    im.save(path, compress_level=1)


def make_corpus(root: Path) -> Path:
    from figlink.corpus import Corpus
    from figlink.model import Figure, Panel, Paper

    corpus = root / "corpus"
    if (corpus / "corpus.sqlite").exists():
        return corpus
    with Corpus(corpus) as c:
        paper = Paper("BENCH1", "jats", title="huge figures")
        folder = c.image_dir_for(paper.paper_id)
        folder.mkdir(parents=True, exist_ok=True)
        for name, size in SIZES.items():
            make_image(folder / f"{name}.png", size)
            cols, rows = GRID
            w, h = size[0] / cols, size[1] / rows
            panels = [Panel("abcdefgh"[i], [(i % cols) * w, (i // cols) * h, (i % cols + 1) * w, (i // cols + 1) * h])
                      for i in range(cols * rows)]
            paper.figures.append(Figure(figure_id=name, label=name, caption=name, image=f"images/BENCH1/{name}.png",
                                        panels=panels))
        c.put_paper(paper, "bench", "bench")
        c.commit()
    return corpus


class Server:
    """``figlink serve`` in a child process (this interpreter, this PYTHONPATH), with an RSS sampler."""

    def __init__(self, corpus: Path, port: int, kill_bytes: int) -> None:
        import psutil

        code = "import sys; from figlink.server import serve; serve(sys.argv[1], port=int(sys.argv[2]))"
        self.proc = subprocess.Popen([sys.executable, "-c", code, str(corpus), str(port)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.ps = psutil.Process(self.proc.pid)
        self.url = f"http://127.0.0.1:{port}"
        self.kill_bytes = kill_bytes
        self.killed = False
        self.peak = 0
        self.stop = threading.Event()

    def wait_ready(self) -> None:
        import httpx

        for _ in range(600):
            try:
                httpx.get(self.url + "/static/app.js", timeout=1)
                return
            except httpx.HTTPError:
                time.sleep(0.1)
        raise RuntimeError("server did not start: " + self.proc.stderr.read().decode()[-2000:])

    def rss(self) -> int:
        return self.ps.memory_info().rss

    def sample(self) -> None:
        while not self.stop.is_set() and self.proc.poll() is None:
            try:
                r = self.rss()
            except Exception:  # noqa: BLE001 - process gone
                return
            self.peak = max(self.peak, r)
            if r > self.kill_bytes:
                self.killed = True
                self.proc.kill()
                return
            time.sleep(0.02)

    def close(self) -> None:
        self.stop.set()
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(20)


def burst(server: Server, urls: list[str]) -> tuple[list[int], list[float]]:
    """All ``urls`` at once, one thread each: status codes (-1: no answer) and seconds."""
    import httpx

    codes: list[int] = [0] * len(urls)
    secs: list[float] = [0.0] * len(urls)
    start = threading.Barrier(len(urls))

    def get(client: httpx.Client, i: int) -> None:
        start.wait()
        t = time.perf_counter()
        try:
            codes[i] = client.get(server.url + urls[i]).status_code
        except httpx.HTTPError:
            codes[i] = -1
        secs[i] = time.perf_counter() - t

    with httpx.Client(timeout=600, limits=httpx.Limits(max_connections=len(urls))) as client:
        threads = [threading.Thread(target=get, args=(client, i)) for i in range(len(urls))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    return codes, secs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workdir", type=Path, default=None, help="keeps the synthetic corpus between runs")
    ap.add_argument("--port", type=int, default=8767)
    ap.add_argument("--kill-gb", type=float, default=10.0, help="stop the server past this RSS")
    args = ap.parse_args()
    import figlink

    root = args.workdir or Path(tempfile.mkdtemp(prefix="bench-server-images-"))
    root.mkdir(parents=True, exist_ok=True)
    corpus = make_corpus(root)
    base = "/api/papers/BENCH1/figures"
    cases = [
        ("8 crops, 18000x9000, cold", [f"{base}/big/panels/{p}/image" for p in "abcdefgh"]),
        ("8 crops, 18000x9000, warm", [f"{base}/big/panels/{p}/image" for p in "hgfedcba"]),
        ("8 images 18000x9000 ?max_side=480", [f"{base}/big/image?max_side=480"] * 8),
        ("1 crop, 20000x10000", [f"{base}/bomb/panels/a/image"]),
    ]
    print(f"figlink from {Path(figlink.__file__).parent}")
    print(f"{'case':38} {'answers':>18} {'p50 s':>7} {'max s':>7} {'peak RSS MB':>12} {'growth MB':>10}")
    server = Server(corpus, args.port, int(args.kill_gb * 2**30))
    try:
        server.wait_ready()
        sampler = threading.Thread(target=server.sample, daemon=True)
        sampler.start()
        for name, urls in cases:
            if server.proc.poll() is not None:
                print(f"{name:38} {'(server gone)':>18}")
                continue
            before = server.rss()
            server.peak = before
            codes, secs = burst(server, urls)
            answers = ", ".join(f"{codes.count(c)}x{c}" for c in sorted(set(codes)))
            note = "  (killed past --kill-gb)" if server.killed else ""
            print(f"{name:38} {answers:>18} {statistics.median(secs):7.2f} {max(secs):7.2f} "
                  f"{server.peak / 2**20:12.0f} {(server.peak - before) / 2**20:10.0f}{note}")
    finally:
        server.close()


if __name__ == "__main__":
    main()

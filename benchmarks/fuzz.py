"""Fuzz parse, annotate and render with mutated real stages (and, with --found, found-kernel folders).

    python benchmarks/fuzz.py [--cases 10000] [--seed 1] [--series 3.9] [--jobs 4]
    python benchmarks/fuzz.py --found [--cases 10000] [--jobs 2]
    python benchmarks/fuzz.py --records [--cases 10000] [--jobs 2]

`--records` (issue 33) builds each case from a checked-in `versions --record`
folder (tests/data/versions), a set of managed environments or a record path:
a manifest tampered (values of the wrong type, nested 5,000 deep, hostile
kernel keys and labels, artifact names out of the folder, failure reports of
any shape, a cut-off file), an artifact damaged or a gzip bomb; environments
with a damaged tritonscope-env.json, no Python, no triton, stale builds with
junk locks; record paths onto a file, into /proc, over a record, 300
characters long, through a symlink.  Each runs in-process through what
`versions --replay` (every report format, the JUnit parsed), `--envs`,
`--add --no-install`, `--remove` and `--record` do.

`--found` builds each case from the checked-in real capture (tests/data/capture)
and AMD compile (tests/data/open_amd): a Triton cache, a dump, a capture, an
Inductor cache, an --emit folder, a folder mixing two compiles, or one stage
file alone (under its own or another stage's extension); then damages some
files (cut short, emptied, text mutated, JSON values of the wrong type or
nested 100,000 deep, bytes flipped, another file's content) and may give it
a hostile name (escape sequences, a newline, 240 characters) and symlinks (a
loop, one to itself, one to /dev/zero).  Each runs in-process through what
`open` and `explain` do: the listing, loading a kernel, analyze, the summary
and stage panels, explain and its rendering.

Each case takes the checked-in real stages of one compile (tests/data/stages),
damages one or more of them (lines deleted, duplicated, swapped or cut short;
brackets, numbers, quotes and control characters injected; lines spliced in
from another stage) and runs the whole pipeline a saved report or a hand-fed
IR file would go through: analyze (parse + annotate + mix + summary), every
terminal view, the HTML and Markdown reports, the JSON round trip and a diff
against the undamaged compile.  A crash is any exception (a hostile input
may be refused with a typed TritonscopeError, but analysis and rendering of
a damaged stage must never raise at all) and any case that takes longer than
`--limit` seconds (a regex that backtracks without end).

`--jobs N` splits the cases over N processes (case n of shard j uses seed
`seed * 1000 + j`), so a 10,000-case run takes minutes on a many-core
machine; the figures are summed.  Prints the number of cases, crashes (with the first few tracebacks) and
cases per second; exits 1 on a crash.  tests/test_fuzz.py runs a few hundred
cases of the same harness.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import signal
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STAGES_DIR = ROOT / "tests" / "data" / "stages"
ORDER = ("python", "ttir", "ttgir", "llir", "ptx", "sass")

# What damage looks like: MLIR/PTX/SASS punctuation, numbers at the edges,
# escapes, multi-byte text and the characters our parsers split on.
_SNIPPETS = ["<", ">", "{", "}", "[", "]", "(", ")", "#", "%", '"', "!", ":", ",", "=", "x", ".", ";", "@",
             "loc(", "#loc", "loc(#loc99)", "#ttg.blocked<{", "tensor<", "x0x", "-1", "0", "4294967296",
             "99999999999999999999", "\x1b[2J", "\x1b]52;c;AAAA\x07", "\u202e", "é", "\t", "\\", "//##",
             ".loc 1 0 0", ".file 9 \"", "!dbg !", "/*0000*/", "sizePerThread = [", "order = [1, 0]",
             "#ttg.nvidia_mma<{versionMajor = 9", "cp.async.ca.shared.global [", "mma.sync.aligned.m16n8k",
             "ldmatrix.sync.aligned.m8n8.x", "HMMA.", "LDGSTS.E.BYPASS.", "STL.128", "scf.for", "tt.dot"]


def load_cases(series: str) -> list[tuple[dict, dict[str, str]]]:
    out = []
    for case in sorted((STAGES_DIR / series).iterdir()):
        if not case.is_dir():
            continue
        meta = json.loads((case / "meta.json").read_text())
        stages = {k: (case / k).read_text() for k in ORDER if (case / k).exists()}
        out.append((meta, stages))
    return out


def artifact_of(meta: dict, stages: dict[str, str]):
    from tritonscope.core.model import Artifact, KernelSpec, Resources

    spec = KernelSpec(target=meta["target"], kernel=meta["kernel"], file=meta["file"], args=meta["args"],
                      constexprs=meta["constexprs"], num_warps=meta["num_warps"], num_stages=meta["num_stages"],
                      arch=meta["arch"], shape=tuple(meta["shape"]) if meta["shape"] else None,
                      dtype=meta["dtype"], grid=tuple(meta["grid"]) if meta["grid"] else None)
    return Artifact(spec=spec, triton_version=meta["triton"], kernel_hash="0" * 16, stages=dict(stages),
                    python_first_line=meta["first_line"], metadata={}, resources=Resources(), specialization=[])


def mutate(rng: random.Random, text: str, donor: str) -> str:
    lines = text.splitlines()
    if not lines:
        return rng.choice(_SNIPPETS)
    for _ in range(rng.randint(1, 6)):
        if not lines:
            break
        i = rng.randrange(len(lines))
        kind = rng.randrange(9)
        if kind == 0:
            del lines[i]
        elif kind == 1:
            lines.insert(i, lines[i])
        elif kind == 2:
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif kind == 3:
            lines[i] = lines[i][: rng.randrange(len(lines[i]) + 1)]
        elif kind == 4:
            s = lines[i]
            k = rng.randrange(len(s) + 1)
            lines[i] = s[:k] + rng.choice(_SNIPPETS) + s[k:]
        elif kind == 5:
            lines[i] = "".join(rng.choice(_SNIPPETS) for _ in range(rng.randint(1, 8)))
        elif kind == 6:
            d = donor.splitlines()
            if d:
                lines.insert(i, rng.choice(d))
        elif kind == 7:
            # numbers to the edges: 0, negative, huge
            import re
            lines[i] = re.sub(r"\d+", lambda m: rng.choice(["0", "-1", "65536", "99999999999999999999", m.group(0)]),
                              lines[i])
        else:
            lines = lines[: i + 1]  # truncated file
    return "\n".join(lines)


class _Slow(Exception):
    pass


def _alarm(signum, frame):
    raise _Slow()


def run_case(meta: dict, stages: dict[str, str], base, damaged: tuple[str, ...] = (),
             rng: random.Random | None = None) -> None:
    """Analyze one (damaged) compile and show it the ways a user could see it.

    Every case analyzes, prints the summary and the damaged stages; then two
    of the other outputs, picked at random, so a long run covers them all
    without paying for every renderer on every case.
    """
    from rich.console import Console

    from tritonscope.analyses.analysis import analyze
    from tritonscope.analyses.diff import diff_analyses
    from tritonscope.outputs.render import views
    from tritonscope.outputs.render.html import render_html
    from tritonscope.outputs.render.markdown import render_markdown
    from tritonscope.outputs.render.terminal import stage_panel, summary_panel
    from tritonscope.outputs.report import analysis_from_dict, analysis_to_dict

    an = analyze(artifact_of(meta, stages))
    con = Console(file=io.StringIO(), width=100, color_system=None, highlight=False)
    con.print(summary_panel(an))
    for key in damaged or tuple(an.parsed):
        if key in an.parsed:
            con.print(stage_panel(an, key, width=100, max_lines=0))

    def line_view():
        py = views.python_lines(an)
        if py:
            con.print(views.line_view(an, sorted(py)[len(py) // 2], views.PIPELINE))

    outputs = [
        lambda: con.print(views.walkthrough(an)),
        lambda: con.print(views.mix_view(an)),
        lambda: con.print(views.side_by_side(an, ("ttgir", "ptx", "sass"), 100)),
        line_view,
        lambda: render_html(an),
        lambda: render_markdown(an),
        lambda: analysis_from_dict(json.loads(json.dumps(analysis_to_dict(an)))),
        lambda: diff_analyses(base, an, force_different=True),
    ]
    for out in (rng.sample(outputs, 2) if rng else outputs):
        out()


def fuzz(cases: int, seed: int, series: str, limit: float = 20.0, show: int = 3) -> dict:
    from tritonscope.analyses.analysis import analyze
    from tritonscope.core.errors import TritonscopeError

    rng = random.Random(seed)
    corpus = load_cases(series)
    bases = [analyze(artifact_of(m, s)) for m, s in corpus]
    crashes: list[str] = []
    slow = 0
    old = signal.signal(signal.SIGALRM, _alarm)
    start = time.perf_counter()
    try:
        for n in range(cases):
            ci = rng.randrange(len(corpus))
            meta, stages = corpus[ci]
            damaged = dict(stages)
            keys = [k for k in ORDER if k in stages]
            hit = rng.sample(keys, rng.randint(1, min(3, len(keys))))
            for key in hit:
                damaged[key] = mutate(rng, stages[key], stages[rng.choice(keys)])
            signal.setitimer(signal.ITIMER_REAL, limit)
            try:
                run_case(meta, damaged, bases[ci], tuple(hit), rng)
            except TritonscopeError:
                pass  # a typed refusal is an answer, not a crash
            except _Slow:
                slow += 1
                crashes.append(f"case {n}: slower than {limit} s")
            except Exception:
                crashes.append(f"case {n} ({meta['kernel']} {meta['arch']}):\n{traceback.format_exc()}")
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
        signal.signal(signal.SIGALRM, old)
    seconds = time.perf_counter() - start
    return {"cases": cases, "crashes": len(crashes), "slow": slow, "seconds": seconds,
            "first": crashes[:show]}


# --------------------------------------------------------------------------
# Found kernels: caches, dumps, captures and stage files as `open` and `explain` read them
# --------------------------------------------------------------------------

DATA = ROOT / "tests" / "data"
CAPTURE_DIR = DATA / "capture"
AMD_DIR = DATA / "open_amd" / "gfx1100_vector_add"
FOUND_KINDS = ("cache", "dump", "capture", "mixed", "lone", "amd", "emit", "inductor")
# Names a hostile (or unlucky) folder could carry: escape sequences, a newline, the longest name a
# file system allows, right-to-left marks, dots.
_HOSTILE_NAMES = ["\x1b[2J\x1b[31mred", "two\nlines", "x" * 240, "\u202etxt.exe", "..dots..", "-k", "%s%n",
                  "tab\there", "bell\x07", "é\u0301"]


def _kernel_dirs() -> list[Path]:
    return sorted(p for p in (CAPTURE_DIR / "kernels").iterdir() if p.is_dir())


def _damage_file(rng: random.Random, path: Path, donor: bytes) -> None:
    """One kind of damage to one file: cut short, text mutated, JSON values of the wrong type, bytes flipped."""
    data = path.read_bytes()
    kind = rng.randrange(8)
    if kind == 0:
        path.write_bytes(data[: rng.randrange(len(data) + 1)])
    elif kind == 1:
        path.write_bytes(b"")
    elif kind == 2 and not data.startswith(b"\x7fELF"):
        text = data.decode("utf-8", errors="replace")
        path.write_text(mutate(rng, text, donor.decode("utf-8", errors="replace")), encoding="utf-8")
    elif kind == 3 and path.suffix == ".json":
        try:
            obj = json.loads(data)
        except ValueError:
            obj = {}
        if isinstance(obj, dict) and obj:
            key = rng.choice(sorted(obj))
            obj[key] = rng.choice(["x", -1, 2 ** 70, None, [], {}, 1.5, True, "\x1b[2J", [[[]]], {"a": {"b": 1}}])
        path.write_text(json.dumps(obj))
    elif kind == 4 and path.suffix == ".json":
        depth = rng.choice([50, 5000, 100000])
        path.write_text("[" * depth + "]" * depth)
    elif kind == 5:
        b = bytearray(data)
        for _ in range(rng.randint(1, 16)):
            if b:
                b[rng.randrange(len(b))] = rng.randrange(256)
        path.write_bytes(bytes(b))
    elif kind == 6:
        path.write_bytes(donor)  # another stage's (or kernel's) content under this name
    else:
        path.write_bytes(bytes(rng.randrange(256) for _ in range(rng.randint(0, 64))))


def _copy_kernel(src: Path, dst: Path, *, keep_json: bool, stem: str | None = None) -> list[Path]:
    dst.mkdir(parents=True, exist_ok=True)
    out = []
    for f in sorted(src.iterdir()):
        if f.name == "record.json" or (f.suffix == ".json" and not keep_json) or f.suffix == ".py":
            continue
        name = f"{stem}{f.suffix}" if stem is not None else f.name
        (dst / name).write_bytes(f.read_bytes())
        out.append(dst / name)
    return out


def build_found_case(rng: random.Random, root: Path) -> tuple[str, Path]:
    """(kind, path to open): one found-kernel folder or file made from the checked-in real ones, damaged."""
    import shutil

    kind = rng.choice(FOUND_KINDS)
    kernels = _kernel_dirs()
    hostile = rng.random() < 0.3
    name = rng.choice(_HOSTILE_NAMES) if hostile else "K" + "".join(rng.choice("ABCDEFGH234567") for _ in range(8))
    files: list[Path] = []
    if kind in ("cache", "dump", "mixed", "emit", "inductor"):
        top = root / ("torchinductor_me" if kind == "inductor" else "found")
        parent = top / "triton" / "0" if kind == "inductor" and rng.random() < 0.7 else top
        for i in range(rng.randint(1, 3)):
            src = rng.choice(kernels)
            folder = parent / (name if i == 0 else f"{name}{i}")
            files += _copy_kernel(src, folder, keep_json=kind in ("cache", "emit", "inductor"))
            stem = next(src.glob("*.ttir")).stem
            if kind in ("cache", "inductor"):
                (folder / f"__grp__{stem}.json").write_text(json.dumps({"child_paths": {}}))
            if kind == "mixed":  # a second compile's files over some of the first's
                other = rng.choice(kernels)
                for f in other.iterdir():
                    if f.suffix in (".ptx", ".cubin", ".ttgir", ".llir") and rng.random() < 0.5:
                        (folder / f"{stem}{f.suffix}").write_bytes(f.read_bytes())
            if kind == "emit":
                meta = folder / f"{stem}.json"
                data = json.loads(meta.read_text())
                data["tritonscope"] = {"files": {f.name: f.stat().st_size for f in folder.iterdir() if f != meta}}
                meta.write_text(json.dumps(data))
                for f in list(folder.iterdir()):
                    if f != meta and rng.random() < 0.3:
                        f.unlink()
        if kind == "inductor" and rng.random() < 0.5:
            (top / "ab").mkdir(parents=True, exist_ok=True)
            (top / "ab" / "cabc.py").write_text("# generated\n")
        path = top
        if rng.random() < 0.3 and kind != "inductor":
            path = parent / name  # one kernel's folder
    elif kind == "capture":
        path = root / "cap"
        shutil.copytree(CAPTURE_DIR, path, symlinks=True)
        files = [p for p in path.rglob("*") if p.is_file()]
        if hostile:
            kdir = next((path / "kernels").iterdir())
            try:
                kdir.rename(kdir.parent / name)
            except OSError:
                pass
            files = [p for p in path.rglob("*") if p.is_file()]
    elif kind == "amd":
        path = root / "amd" / name
        path.mkdir(parents=True)
        for f in AMD_DIR.iterdir():
            (path / f.name).write_bytes(f.read_bytes())
        files = list(path.iterdir())
    else:  # one stage file alone, maybe under another stage's extension
        src = rng.choice([f for k in kernels for f in k.iterdir() if f.name != "record.json"]
                         + [f for f in AMD_DIR.iterdir()])
        ext = src.suffix if rng.random() < 0.8 else rng.choice([".ptx", ".llir", ".cubin", ".mlir", ".ttgir",
                                                              ".hsaco", ".amdgcn", ".sass", ".json", ".source"])
        path = root / f"{name[:200]}{ext}"
        path.write_bytes(src.read_bytes())
        files = [path]
    damaged = rng.sample(files, min(len(files), rng.choice([0, 1, 1, 2, 3]))) if files else []
    donors = files or [path]
    for f in damaged:
        try:
            _damage_file(rng, f, rng.choice(donors).read_bytes() if rng.choice(donors).is_file() else b"")
        except OSError:
            pass
    if rng.random() < 0.2 and path.is_dir():  # symlinks: a loop, one to itself, one out of the folder
        for link, target in (("loop", "."), ("self", "self"), ("out", "/etc/hostname"), ("dev", "/dev/zero")):
            if rng.random() < 0.5:
                try:
                    (path / link).symlink_to(target)
                except OSError:
                    pass
    return kind, path


def run_found_case(path: Path, rng: random.Random) -> int:
    """What `open PATH`, `open PATH --kernel K` and `explain PATH` do, in-process: list, load, analyze,
    render, explain.  A typed TritonscopeError is an answer; anything else is a crash.  Returns how many
    kernels it explained (the rest were refused with a typed error)."""
    import contextlib
    from types import SimpleNamespace

    from rich.console import Console

    from tritonscope.inputs import sources
    from tritonscope.analyses.analysis import analyze
    from tritonscope.commands.open import _print_listing
    from tritonscope.core.errors import TritonscopeError
    from tritonscope.analyses.explain import explain
    from tritonscope.outputs.render.explain_view import explain_renderable
    from tritonscope.outputs.render.terminal import stage_panel, summary_panel

    con = Console(file=io.StringIO(), width=100, color_system=None, highlight=False)
    env = SimpleNamespace(console=lambda stderr=False: con, paged=lambda c: contextlib.nullcontext())
    source = sources.open_source(path)
    with contextlib.redirect_stdout(io.StringIO()):  # the --json listing is echoed to stdout
        _print_listing(source, env, sort=rng.choice([None, "name", "-registers", "launches"]), where=None,
                       as_json=rng.random() < 0.3)
    explained = 0
    for entry in rng.sample(source.entries, min(2, len(source.entries))):
        try:
            art = sources.load_artifact(entry, target=str(path))
        except TritonscopeError:
            continue
        an = analyze(art)
        con.print(summary_panel(an))
        for key in list(an.parsed)[:3]:
            con.print(stage_panel(an, key, width=100, max_lines=40))
        expl = explain(an, triton_banks=False, source=f"found {entry.kind}", where="stage file")
        con.print(explain_renderable(expl, 100))
        explained += 1
    return explained


def fuzz_found(cases: int, seed: int, limit: float = 20.0, show: int = 3) -> dict:
    """`cases` found-kernel folders and files (caches, dumps, captures, mixed, lone, AMD, --emit, Inductor),
    damaged and oddly named, through open's and explain's analysis paths."""
    import shutil
    import tempfile

    from tritonscope.core.errors import TritonscopeError

    rng = random.Random(seed)
    crashes: list[str] = []
    slow = 0
    kinds: dict[str, int] = {}
    explained = refused = 0
    old = signal.signal(signal.SIGALRM, _alarm)
    start = time.perf_counter()
    try:
        for n in range(cases):
            root = Path(tempfile.mkdtemp(prefix="tritonscope-fuzz-"))
            kind = "?"
            try:
                kind, path = build_found_case(rng, root)
                kinds[kind] = kinds.get(kind, 0) + 1
                signal.setitimer(signal.ITIMER_REAL, limit)
                try:
                    explained += run_found_case(path, rng)
                finally:
                    signal.setitimer(signal.ITIMER_REAL, 0)
            except TritonscopeError:
                refused += 1
            except _Slow:
                slow += 1
                crashes.append(f"case {n} ({kind}): slower than {limit} s")
            except Exception:
                crashes.append(f"case {n} ({kind}):\n{traceback.format_exc()}")
            finally:
                shutil.rmtree(root, ignore_errors=True)
    finally:
        signal.signal(signal.SIGALRM, old)
    return {"cases": cases, "crashes": len(crashes), "slow": slow, "seconds": time.perf_counter() - start,
            "first": crashes[:show], "kinds": kinds, "explained": explained, "refused": refused}


# --------------------------------------------------------------------------
# --records: versions records and replays, managed environments, record paths
# --------------------------------------------------------------------------

VERSIONS_DIR = DATA / "versions"
RECORD_KINDS = ("replay", "env", "record_path")
_HOSTILE_TEXT = ["<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "\x1b[2J\x1b]52;c;AAAA\x07", "\x00",
                 "a\nb\r\nc", "]]>&amp;<!--", "|pipe|`tick`*star*", "\ud800", "\ufffe", "x" * 5000, "", "[bold]x[/]",
                 "%s%n{0}", "../../etc/passwd", "/abs/path", "é\u202e"]


_DEEP = "__tritonscope_fuzz_deep__"


def _dumps(value) -> str:
    return json.dumps(value, allow_nan=True).replace(json.dumps(_DEEP), "[" * 5000 + "]" * 5000)


def _junk(rng: random.Random, depth: int = 0):
    """A JSON value of any type, sometimes hostile text or an absurd number, rarely nested deep."""
    k = rng.randrange(10)
    if k == 0 and depth < 3:
        return {rng.choice(_HOSTILE_TEXT + ["key", "line", "failure"]): _junk(rng, depth + 1) for _ in range(2)}
    if k == 1 and depth < 3:
        return [_junk(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    if k == 2:
        return rng.choice([0, -1, 2 ** 63, 10 ** 400 if rng.random() < 0.1 else 1e308, float("nan")])
    if k == 3:
        return rng.choice([True, False, None])
    if k == 4:
        return _DEEP   # written as 5,000 nested lists (json.dumps cannot nest that deep itself)
    return rng.choice(_HOSTILE_TEXT)


def _sides(rng: random.Random, jobs) -> list:
    job = rng.choice(jobs) if isinstance(jobs, list) and jobs else {}
    sides = job.get("sides") if isinstance(job, dict) else None
    return sides if isinstance(sides, list) and sides else [{}]


def _tamper_manifest(rng: random.Random, m: dict) -> None:
    jobs = m.get("jobs") if isinstance(m.get("jobs"), list) else []
    for _ in range(rng.randint(1, 4)):
        kind = rng.randrange(12)
        if kind == 0:
            m[rng.choice(["format", "sides", "jobs"])] = _junk(rng)
        elif kind == 1 and jobs and isinstance(jobs[0], dict):
            jobs[0][rng.choice(["key", "arch", "sides"])] = _junk(rng)
        elif kind == 2 and jobs and isinstance(jobs[-1], dict):   # a hostile key or arch: the report escapes it
            jobs[-1][rng.choice(["key", "arch"])] = rng.choice(_HOSTILE_TEXT)
        elif kind == 3 and jobs:      # a side's artifact named out of the folder, or missing
            side = rng.choice(_sides(rng, jobs))
            if isinstance(side, dict):
                side["artifact"] = rng.choice(["../manifest.json", "/etc/passwd", "nope.json.gz", "", ".hidden",
                                               "a/b.json.gz", "000-a.json.gz"])
        elif kind == 4 and jobs:      # an error entry: hostile words, a failure report of any shape
            side = rng.choice(_sides(rng, jobs))
            if isinstance(side, dict):
                side.pop("artifact", None)
                side["error"] = rng.choice([_junk(rng), {"type": "CompileError", "message": rng.choice(_HOSTILE_TEXT),
                                                         "line": rng.choice(_HOSTILE_TEXT),
                                                         "failure": rng.choice([_junk(rng), {
                                                             "one_line": rng.choice(_HOSTILE_TEXT),
                                                             "error": rng.choice(_HOSTILE_TEXT),
                                                             "op": _junk(rng)}])}])
        elif kind == 5 and jobs:
            import copy

            jobs.append(copy.deepcopy(rng.choice(jobs)))
        elif kind == 6 and jobs:
            del jobs[rng.randrange(len(jobs))]
        elif kind == 7:
            m["sides"] = [{"label": rng.choice(_HOSTILE_TEXT)}, {"label": rng.choice(_HOSTILE_TEXT)}]
        elif kind == 8 and jobs and isinstance(jobs[0], dict):
            jobs[0]["sides"] = rng.choice([[], [{}], [{}, {}, {}], "x"])
        # else: untouched (a whole record is a case too)


def _small_record(rng: random.Random, root: Path) -> Path:
    """A record folder from a checked-in one: one or two of its jobs, most sides turned into errors (cheap to
    replay: only artifacts are analysed), then tampered."""
    src = rng.choice([p for p in VERSIONS_DIR.iterdir() if (p / "manifest.json").is_file()])
    m = json.loads((src / "manifest.json").read_text())
    m["jobs"] = rng.sample(m["jobs"], min(len(m["jobs"]), rng.choice([1, 1, 2])))
    keep = rng.random() < 0.08   # now and then a whole, analysed replay
    dst = root / "record"
    dst.mkdir()
    for job in m["jobs"]:
        for side in job["sides"]:
            name = side.get("artifact")
            if name and keep:
                (dst / name).write_bytes((src / name).read_bytes())
                if rng.random() < 0.3:
                    _damage_file(rng, dst / name, b"")
            elif name:
                side.pop("artifact")
                side["error"] = {"type": "CompileError", "message": "Triton failed", "line": "pass X on tt.dot at k.py:1"}
    if rng.random() < 0.85:
        _tamper_manifest(rng, m)
    text = _dumps(m) if rng.random() < 0.95 else _dumps(m)[: rng.randrange(200)]
    (dst / "manifest.json").write_text(text)
    if rng.random() < 0.05:   # a gzip bomb where an artifact should be
        import gzip

        name = "000-a.json.gz"
        (dst / name).write_bytes(gzip.compress(b"[" * (3 << 20)))
        m.setdefault("jobs", [{"key": "k", "arch": "sm_90a", "sides": [{}, {}]}])
    return dst


def _damaged_envs(rng: random.Random, cache: Path) -> list[str]:
    """Managed environments in `cache` as a user or a crash may leave them; the versions to ask for."""
    root = cache / "triton-envs"
    root.mkdir(parents=True)
    versions = []
    for _ in range(rng.randint(1, 4)):
        v = rng.choice(["3.4.0", "3.6.0", "3.5.1", "3.9.0", "3.2.0"])
        versions.append(v)
        kind = rng.randrange(6)
        name = rng.choice([f"triton-{v}", f".building-{v}-{rng.choice([1, 999999999, os.getpid()])}-ab",
                           f".building-{v}-notapid-x", f".removing-triton-{v}-1-2", "triton-" + rng.choice(
                               ["", "..", "x\ny", "\x1b[2J"])])
        folder = root / name
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError:
            continue
        if kind >= 1:
            (folder / "bin").mkdir(exist_ok=True)
            (folder / "bin" / "python").write_text(f"#!/bin/sh\nexec {sys.executable} \"$@\"\n")
            (folder / "bin" / "python").chmod(0o755)
        if kind >= 2:
            meta = rng.choice([{"triton": v, "triton_dir": rng.choice(["lib/x/triton", "/etc", "", 5])}, _junk(rng),
                               {"triton": _junk(rng), "backends": _junk(rng), "python": _junk(rng)}])
            text = _dumps(meta) if rng.random() < 0.7 else rng.choice(["{", "", "\x00\xff", "[]", "null"])
            (folder / "tritonscope-env.json").write_text(text, errors="surrogateescape")
        if kind >= 3:
            site = folder / "lib" / "python3.11" / "site-packages" / "triton"
            site.mkdir(parents=True, exist_ok=True)
            if kind >= 4:
                (site / "__init__.py").write_text("")
        if kind == 5:
            (folder / "builder.lock").write_text(rng.choice(["", "junk", '{"pid": -1}']))
    return versions + [rng.choice(["3.9", "latest", "3.1.0", "../x", "", "3.4.0; rm -rf /", "9" * 50])]


def run_record_case(kind: str, rng: random.Random, root: Path) -> None:
    """One case through what versions does with it, in-process; a typed TritonscopeError is an answer."""
    import contextlib

    from rich.console import Console

    from tritonscope import versions as V
    from tritonscope.core.errors import TritonscopeError
    from tritonscope.versions import envs as E
    from tritonscope.versions import report as R
    from tritonscope.versions.compare import parse_rule

    if kind == "replay":
        rules = [parse_rule(r) for r in rng.sample(["registers>+10%", "spills>0", "drains>=+1", "predicted>+5%"],
                                                   rng.randint(0, 2))]
        rep = V.from_record(_small_record(rng, root), rules=rules, predict=False)
        con = Console(file=io.StringIO(), width=rng.choice([60, 100, 160]), color_system=None)
        R.print_report(con, rep, details=rng.choice([0, 5]))
        for fmt in ("html", "markdown", "json", "text"):
            R.render(rep, fmt)
        import xml.dom.minidom

        xml.dom.minidom.parseString(R.junit(rep).encode("utf-8"))   # well-formed, whatever the keys hold
    elif kind == "env":
        from tritonscope.analyses.failure import other_tritons

        versions = _damaged_envs(rng, root)
        E.list_envs()
        other_tritons(rng.choice(versions))
        for v in rng.sample(versions, min(3, len(versions))):
            with contextlib.suppress(TritonscopeError):
                E.resolve(v, install=False, remake=rng.random() < 0.3)
        with contextlib.suppress(TritonscopeError):
            E.remove_env(rng.choice(versions + ["all"]))
        E.clean_unfinished()
    else:
        from tritonscope.core.output import check_folder

        target = rng.choice([root / "rec", root / "file", Path("/proc/nope/rec"), root / ("x" * 300),
                             root / "file" / "under", root / "made", root / "link", Path(""), root / "a\x00b"])
        (root / "file").write_text("x")
        (root / "made").mkdir()
        (root / "made" / "manifest.json").write_text("{}")
        with contextlib.suppress(OSError):
            (root / "link").symlink_to("/etc")
        force = rng.random() < 0.5
        folder = check_folder(target, force=force, holds="manifest.json", what="record")
        jobs = [V.Job(rng.choice(_HOSTILE_TEXT), "sm_90a", {})]
        V.write_record(folder, jobs, [V.Side("A", None), V.Side("B", None)],
                       {(0, 0): {"error": {"message": rng.choice(_HOSTILE_TEXT)}},   # as the worker answers: str fields
                        (1, 0): {"error": {"type": "CompileError", "message": rng.choice(_HOSTILE_TEXT),
                                           "context": rng.choice(_HOSTILE_TEXT)}}})
        V.from_record(folder)


def fuzz_records(cases: int, seed: int, limit: float = 20.0, show: int = 3) -> dict:
    """`cases` versions records (tampered replays, hostile keys, gzip bombs), damaged managed environments and
    hostile record paths, through what versions does with them."""
    import shutil
    import tempfile

    from tritonscope.core.errors import TritonscopeError

    rng = random.Random(seed)
    crashes: list[str] = []
    slow = refused = 0
    kinds: dict[str, int] = {}
    old = signal.signal(signal.SIGALRM, _alarm)
    saved = {k: os.environ.get(k) for k in ("TRITONSCOPE_CACHE_DIR", "TRITONSCOPE_MAX_REPORT_MB")}
    start = time.perf_counter()
    try:
        for n in range(cases):
            root = Path(tempfile.mkdtemp(prefix="tritonscope-fuzz-"))
            kind = rng.choice(RECORD_KINDS)
            kinds[kind] = kinds.get(kind, 0) + 1
            os.environ["TRITONSCOPE_CACHE_DIR"] = str(root / "cache")
            os.environ["TRITONSCOPE_MAX_REPORT_MB"] = "2"
            try:
                signal.setitimer(signal.ITIMER_REAL, limit)
                try:
                    run_record_case(kind, rng, root)
                finally:
                    signal.setitimer(signal.ITIMER_REAL, 0)
            except TritonscopeError:
                refused += 1
            except _Slow:
                slow += 1
                crashes.append(f"case {n} ({kind}): slower than {limit} s")
            except Exception:
                crashes.append(f"case {n} ({kind}):\n{traceback.format_exc()}")
            finally:
                shutil.rmtree(root, ignore_errors=True)
    finally:
        signal.signal(signal.SIGALRM, old)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return {"cases": cases, "crashes": len(crashes), "slow": slow, "seconds": time.perf_counter() - start,
            "first": crashes[:show], "kinds": kinds, "explained": cases - refused - len(crashes), "refused": refused}


def _records_shard(job: tuple[int, int, float]) -> dict:
    cases, seed, limit = job
    return fuzz_records(cases, seed, limit)


def _found_shard(job: tuple[int, int, float]) -> dict:
    cases, seed, limit = job
    return fuzz_found(cases, seed, limit)


def _shard(job: tuple[int, int, str, float]) -> dict:
    cases, seed, series, limit = job
    return fuzz(cases, seed, series, limit)


def fuzz_parallel(cases: int, seed: int, series: str, limit: float, jobs: int, found: bool = False,
                  records: bool = False) -> dict:
    """fuzz() (or fuzz_found()) over `jobs` processes, shard j with seed `seed * 1000 + j`; the figures summed."""
    import multiprocessing

    shares = [cases // jobs + (1 if j < cases % jobs else 0) for j in range(jobs)]
    if found or records:
        work, shard = [(n, seed * 1000 + j, limit) for j, n in enumerate(shares) if n], \
            (_records_shard if records else _found_shard)
    else:
        work, shard = [(n, seed * 1000 + j, series, limit) for j, n in enumerate(shares) if n], _shard
    with multiprocessing.get_context("fork").Pool(len(work)) as pool:
        parts = pool.map(shard, work)
    kinds: dict[str, int] = {}
    for p in parts:
        for k, v in (p.get("kinds") or {}).items():
            kinds[k] = kinds.get(k, 0) + v
    return {"cases": sum(p["cases"] for p in parts), "crashes": sum(p["crashes"] for p in parts),
            "slow": sum(p["slow"] for p in parts), "seconds": max(p["seconds"] for p in parts),
            "first": [c for p in parts for c in p["first"]][:3], "kinds": kinds,
            **({"explained": sum(p["explained"] for p in parts), "refused": sum(p["refused"] for p in parts)}
               if found or records else {})}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--series", default=None, help="3.6 or 3.9 (default: the installed Triton's)")
    ap.add_argument("--limit", type=float, default=20.0, help="seconds before a case counts as a hang")
    ap.add_argument("--jobs", type=int, default=1, help="processes to split the cases over")
    ap.add_argument("--found", action="store_true",
                    help="fuzz found kernels instead: caches, dumps, captures and stage files through open/explain")
    ap.add_argument("--records", action="store_true",
                    help="fuzz versions records and replays, managed environments and record paths instead")
    args = ap.parse_args()
    series = args.series
    if series is None:
        from tritonscope import triton_api

        series = ".".join(map(str, triton_api.triton_series()))
    started = time.perf_counter()
    if args.jobs > 1:
        r = fuzz_parallel(args.cases, args.seed, series, args.limit, args.jobs, found=args.found,
                          records=args.records)
    elif args.records:
        r = fuzz_records(args.cases, args.seed, args.limit)
    elif args.found:
        r = fuzz_found(args.cases, args.seed, args.limit)
    else:
        r = fuzz(args.cases, args.seed, series, args.limit)
    wall = time.perf_counter() - started
    what = "versions records, environments and record paths" if args.records else \
        "found-kernel folders and files" if args.found else f"Triton {series} stages"
    print(f"fuzz: {r['cases']} cases on {what}, {r['crashes']} crashes ({r['slow']} hangs), "
          f"{wall:.1f} s wall with {args.jobs} process(es) ({r['cases'] / max(wall, 1e-9):.1f} cases/s)")
    if r.get("kinds"):
        print("  by kind: " + ", ".join(f"{k} {v}" for k, v in sorted(r["kinds"].items()))
              + f"; {r['refused']} refused with a typed error, {r['explained']} "
              + ("answered" if args.records else "kernels opened and explained"))
    for c in r["first"]:
        print(c)
    return 1 if r["crashes"] else 0


if __name__ == "__main__":
    sys.exit(main())

"""Saved reports: JSON round trip, HTML/Markdown/text output, atomic writes,
path hygiene, hostile input, and `tritonscope show` (which must not import triton)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from html.parser import HTMLParser
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tritonscope.cli import app
from tritonscope.core.errors import ExitCode, OutputError

ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner()


@pytest.fixture(scope="module")
def matmul(compiled):
    from tritonscope.analyses.analysis import analyze

    return analyze(compiled("matmul", block=16))


def _cli(*args):
    result = runner.invoke(app, list(args))
    return result


# --------------------------------------------------------------------------
# JSON schema
# --------------------------------------------------------------------------


def test_json_holds_everything_and_round_trips(matmul, tmp_path):
    from tritonscope.outputs.report import analysis_to_dict, load_analysis
    from tritonscope.outputs.save import save_report

    path = save_report(matmul, tmp_path / "r.json", keep_paths=True)
    data = json.loads(path.read_text())
    assert data["schema"] == "tritonscope.report" and data["schema_version"] == 2
    assert data["summary"] == json.loads(json.dumps(matmul.summary.to_dict()))
    assert data["summary"]["spills"] == {"stack": 0, "local": 0, "stores": 0, "loads": 0}
    art = data["artifact"]
    assert art["spec"]["target"] == "matmul" and art["spec"]["kernel"] == "matmul_kernel"
    assert art["spec"]["constexprs"] == {"BLOCK": 16} and art["spec"]["arch"] == "sm_90a"
    assert art["spec"]["num_warps"] == 4 and art["spec"]["num_stages"] == 3 and "options" in art["spec"]
    assert data["versions"]["triton"] == art["triton_version"] and data["versions"]["tritonscope"]
    assert set(art["stages"]) == {"python", "ttir", "ttgir", "llir", "ptx", "sass"}
    assert "cp.async" in art["stages"]["ptx"] and "mma.sync" in art["stages"]["ptx"]
    assert art["resources"]["dynamic_shared"] == matmul.artifact.resources.dynamic_shared
    assert data["mix"] == matmul.mix and any("mma" in c for c in data["mix"]["ptx"])
    for key, stage in matmul.parsed.items():
        assert len(data["parsed"][key]) == len(stage.lines)
        assert all({"number", "text", "raw", "loc"} <= set(ln) for ln in data["parsed"][key])
    assert data["parsed"]["python"][0]["loc"]["file"] == matmul.artifact.spec.file
    assert data["paths"] == "absolute"

    back = load_analysis(path)
    assert back.artifact == matmul.artifact
    assert back.parsed == matmul.parsed
    assert back.notes == matmul.notes
    assert back.mix == matmul.mix
    assert back.summary == matmul.summary
    assert analysis_to_dict(back) == analysis_to_dict(matmul)


def test_a_reports_lines_are_their_dataclass_fields(matmul):
    """line_dict (a report's fast copy of a parsed line) is dataclasses.asdict: every field, the same values,
    the source location as a dict; a field added to Line or SourceLoc is carried too."""
    from dataclasses import asdict

    from tritonscope.outputs.report import line_dict

    lines = [line for st in matmul.parsed.values() for line in st.lines]
    assert any(line.loc is not None for line in lines) and any(line.loc is None for line in lines)
    for line in lines:
        assert line_dict(line) == asdict(line)
        assert list(line_dict(line)) == list(asdict(line))


def test_notes_round_trip(matmul, tmp_path):
    """Notes survive save and load exactly (synthetic ones when no annotator produced any)."""
    from dataclasses import replace

    from tritonscope.core.model import Note
    from tritonscope.outputs.report import load_analysis
    from tritonscope.outputs.save import save_report

    extra = [Note("ptx", 10, "instruction", "cp.async 16B", "copies 16 bytes <global> -> <shared>", "https://x/y")]
    a = replace(matmul, notes=list(matmul.notes) + extra)
    back = load_analysis(save_report(a, tmp_path / "n.json"))
    assert back.notes == a.notes


def test_paths_relative_by_default(matmul, tmp_path):
    from dataclasses import replace

    from tritonscope.language.layouts import layouts_of
    from tritonscope.outputs.report import load_analysis
    from tritonscope.outputs.save import save_report

    matmul = replace(matmul, layouts=layouts_of(matmul))
    assert matmul.layouts

    from tritonscope.outputs.portable import kernel_folders

    folders = kernel_folders(matmul)
    assert os.path.dirname(matmul.artifact.spec.file) in folders
    raw = json.dumps(matmul.artifact.stages)
    # the compiled stages carry the folder they were compiled from (loc / .file / //## File); with a
    # Triton cache hit that is the folder of the first file compiled with this source
    compiled_from = [f for f in folders if f in raw]
    assert compiled_from, "the stages carry a kernel folder"
    for ext in ("json", "html", "md", "txt"):
        text = save_report(matmul, tmp_path / f"r.{ext}").read_text()
        for folder in folders:
            assert folder not in text, f".{ext} report leaks {folder}"
    back = load_analysis(tmp_path / "r.json")
    assert back.artifact.spec.file == "./matmul.py"
    assert re.search(r'\.file\s+\d+ "\./\w+\.py"', back.artifact.stages["ptx"])
    assert re.search(r'loc\("\./\w+\.py":\d+:\d+\)', back.artifact.stages["ttir"])
    assert json.loads((tmp_path / "r.json").read_text())["paths"] == "relative to the kernel's folder"
    kept = save_report(matmul, tmp_path / "k.json", keep_paths=True).read_text()
    assert folder in kept


def test_strip_folder_is_exact():
    from tritonscope.outputs.portable import _strip_folder

    text = 'loc("/home/u/k/m.py":3:1) !DIFile(filename: "m.py", directory: "/home/u/k") /home/u/kk/x.py /home/u/k.old'
    assert _strip_folder(text, "/home/u/k") == ('loc("./m.py":3:1) !DIFile(filename: "m.py", directory: ".") '
                                               '/home/u/kk/x.py /home/u/k.old')


def test_bad_reports_are_clear(tmp_path):
    (tmp_path / "x.json").write_text("{not json")
    r = _cli("show", str(tmp_path / "x.json"))
    assert r.exit_code == ExitCode.BAD_INPUT_FILE and "not valid JSON" in r.output
    (tmp_path / "y.json").write_text('{"schema": "other"}')
    r = _cli("show", str(tmp_path / "y.json"))
    assert r.exit_code == ExitCode.BAD_INPUT_FILE and "not a tritonscope report" in r.output
    (tmp_path / "z.json").write_text('{"schema": "tritonscope.report", "schema_version": 1, "artifact": {}}')
    r = _cli("show", str(tmp_path / "z.json"))
    assert r.exit_code == ExitCode.BAD_INPUT_FILE and "damaged report" in r.output
    r = _cli("show", str(tmp_path / "missing.json"))
    assert r.exit_code == ExitCode.NOT_FOUND and "No such report" in r.output and "missing.json" in r.output


# --------------------------------------------------------------------------
# Atomic, careful writes
# --------------------------------------------------------------------------


def test_write_atomic_refuses_overwrite_without_force(tmp_path):
    from tritonscope.core.output import write_atomic

    p = write_atomic(tmp_path / "a.txt", "one")
    with pytest.raises(OutputError, match="already exists"):
        write_atomic(p, "two")
    assert p.read_text() == "one"
    write_atomic(p, "two", force=True)
    assert p.read_text() == "two"
    assert os.stat(p).st_mode & 0o777 == 0o666 & ~_umask()
    assert sorted(x.name for x in tmp_path.iterdir()) == ["a.txt"]  # no temporary left behind


def _umask():
    m = os.umask(0)
    os.umask(m)
    return m


def test_write_atomic_leaves_nothing_on_failure(tmp_path, monkeypatch):
    from tritonscope.core import output

    target = tmp_path / "r.html"
    target.write_text("old")

    def boom(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(output.os, "fsync", boom)  # interrupted after writing, before the rename
    with pytest.raises(KeyboardInterrupt):
        output.write_atomic(target, "new " * 1000, force=True)
    assert target.read_text() == "old"
    assert sorted(x.name for x in tmp_path.iterdir()) == ["r.html"]
    monkeypatch.undo()

    def full(*a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(output.os, "fsync", full)
    with pytest.raises(OutputError, match="No space left"):
        output.write_atomic(tmp_path / "new.json", "{}")
    assert sorted(x.name for x in tmp_path.iterdir()) == ["r.html"]


def test_render_failure_writes_nothing(matmul, tmp_path, monkeypatch):
    import tritonscope.outputs.render.html as h
    from tritonscope.outputs.save import save_report

    monkeypatch.setattr(h, "_pane", lambda *a, **k: (_ for _ in ()).throw(KeyboardInterrupt()))
    with pytest.raises(KeyboardInterrupt):
        save_report(matmul, tmp_path / "r.html")
    assert list(tmp_path.iterdir()) == []


def test_ctrl_c_during_save_leaves_no_file(tmp_path):
    """A real SIGINT while a big report is being written: exit 130 and no file, no temporary."""
    code = textwrap.dedent(f"""
        import os, signal, sys
        from tritonscope.core import output
        def slow(fd):
            os.kill(os.getpid(), signal.SIGINT)
        output.os.fsync = slow
        from tritonscope.cli import app
        sys.argv = ["tritonscope", "show", {str(ROOT / "tests" / "data" / "report_small.json")!r}, "--stage", "none",
                    "--save", {str(tmp_path / "out.html")!r}]
        app()
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == ExitCode.INTERRUPTED, proc.stderr
    assert "nothing was written" in proc.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name, message", [
    ("r.xyz", "unknown extension '.xyz'"),
    ("noext", "has no extension"),
    ("missing/dir/r.json", "does not exist"),
    ("afile/r.json", "is not a folder"),
    (".", "it is a folder"),
])
def test_unwritable_paths_are_clear(matmul, tmp_path, monkeypatch, name, message):
    from tritonscope.outputs.save import save_report

    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("x")
    if name == ".":
        name = str(tmp_path / "sub.json")
        (tmp_path / "sub.json").mkdir()
    with pytest.raises(OutputError, match=re.escape(message)):
        save_report(matmul, name)


def test_permission_denied_is_clear(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root can write anywhere")
    from tritonscope.core.output import write_atomic

    ro = tmp_path / "ro"
    ro.mkdir(mode=0o500)
    with pytest.raises(OutputError, match="no permission"):
        write_atomic(ro / "r.json", "{}")


# --------------------------------------------------------------------------
# HTML and Markdown
# --------------------------------------------------------------------------


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def _tags(text):
    p = _Tags()
    p.feed(text)
    return p.tags


def test_html_is_self_contained_and_linked(matmul, tmp_path):
    from tritonscope.outputs.render.html import python_line_of
    from tritonscope.outputs.save import save_report

    text = save_report(matmul, tmp_path / "r.html").read_text()
    tags = _tags(text)
    names = [t for t, _ in tags]
    assert names.count("script") == 1 and names.count("style") == 1
    assert not [t for t, a in tags if t in ("link", "img", "iframe", "object", "embed")]
    assert not [a for t, a in tags if any(k in a for k in ("src", "href"))], "nothing is loaded from anywhere"
    assert not re.search(r"https?://(?!www\.w3\.org/)", re.sub(r'title="[^"]*"', "", text)), "no URLs outside notes"
    csp = next(a["content"] for t, a in tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy")
    assert csp.startswith("default-src 'none'; script-src 'sha256-")
    panes = [(a["data-stage"], "hidden" in a) for t, a in tags
             if t == "section" and "pane" in a.get("class", "").split()]
    assert panes == [(k, k == "llir") for k in matmul.parsed]
    # every line of every stage is there (noise lines too, folded: class "l z z-debug"), and each
    # carries the Python line it came from
    from tritonscope.outputs.render.noise import view_lines

    lines = [a for t, a in tags if t == "div" and a.get("class", "").split()[:1] == ["l"]]
    assert len(lines) == sum(len(s.splitlines()) for s in matmul.artifact.stages.values())
    expected = [python_line_of(matmul, k, ln) for k in matmul.parsed for ln in view_lines(matmul, k)]
    assert [int(a["data-py"]) if "data-py" in a else None for a in lines] == expected
    assert "&lt;" in text and "tt.dot" in text  # IR text escaped, not dropped
    assert "Instruction mix" in text and "mma" in text


def test_html_shows_notes_in_margin_and_hover(matmul, tmp_path):
    from dataclasses import replace

    from tritonscope.core.model import Note
    from tritonscope.outputs.save import save_report

    mma_line = next(ln.number for ln in matmul.parsed["ptx"].lines if "mma.sync" in ln.text)
    note = Note("ptx", mma_line, "instruction", "mma m16n8k16", "one warp multiplies <16x16> by <16x8>", None)
    text = save_report(replace(matmul, notes=[note]), tmp_path / "r.html").read_text()
    assert re.search(r'<span class="note k-instruction" title="one warp multiplies &lt;16x16&gt; by '
                     r'&lt;16x8&gt;">mma m16n8k16</span>', text)
    line = re.search(r'<div class="l"[^>]*title="mma m16n8k16: one warp[^"]*"[^>]*><span class="n">'
                     + str(mma_line) + "<", text)
    assert line, "the line itself shows the note on hover"


def test_html_stays_usable_on_a_large_kernel(matmul):
    """Thousands of lines per stage: the report holds every line, in a small page per line.  (How long it
    takes is a figure of benchmarks/analysis_speed.py, not a timed test.)"""
    from dataclasses import replace

    from tritonscope.core.model import Line, ParsedStage
    from tritonscope.outputs.render.html import render_html

    big = {k: ParsedStage(k, tuple(Line(i + 1, ln.text, ln.raw, ln.loc)
                                   for i, ln in enumerate(list(s.lines) * (4000 // max(1, len(s.lines)) + 1))))
           for k, s in matmul.parsed.items()}
    a = replace(matmul, parsed=big)
    text = render_html(a)
    n = sum(len(s.lines) for s in big.values())
    assert n > 20000
    assert text.count('<span class="n">') >= n, "every line is in the report"
    assert len(text) < 400 * n, "HTML per line stays small"


def test_markdown_has_summary_and_details(matmul, tmp_path):
    from dataclasses import replace

    from tritonscope.core.model import Note
    from tritonscope.outputs.save import save_report

    note = Note("ttgir", 3, "encoding", "#blocked", "each thread holds [1, 2] elements", None)
    text = save_report(replace(matmul, notes=[note]), tmp_path / "r.md").read_text()
    assert text.startswith("## tritonscope: matmul\\_kernel")
    assert "| **shared memory** |" in text and "| **registers** |" in text
    assert "**Instruction mix**" in text and re.search(r"^\| mma[^|]* \| \d+ \|", text, re.M)
    assert text.count("<details>") == len(matmul.parsed) == text.count("</details>")
    assert "<summary>Triton GPU IR (TTGIR): " in text and ", 1 notes</summary>" in text
    assert "- line 3: **\\#blocked**: each thread holds \\[1, 2\\] elements" in text or \
           "- line 3: **#blocked**: each thread holds \\[1, 2\\] elements" in text
    assert "```mlir\n" in text and "```ptx\n" in text


def test_text_report_is_the_terminal_view(matmul, tmp_path):
    from tritonscope.outputs.save import save_report

    text = save_report(matmul, tmp_path / "r.txt").read_text()
    assert "matmul_kernel" in text and "PTX" in text and "mma.sync" in text
    assert "\x1b[" not in text


# --------------------------------------------------------------------------
# Hostile input: nothing injects markup
# --------------------------------------------------------------------------

HOSTILE_KERNEL = '''\
import triton
import triton.language as tl


@triton.jit
def __proto__(x_ptr, n, BLOCK: tl.constexpr):
    """</script><img src=x onerror="window.__pwned=1"> ]]> <!-- <svg onload=alert(1)>"""
    # </pre><script>window.__pwned = 1; alert(1)</script> ``` </details> | `x` [a](javascript:alert(1))
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(x_ptr + offs, x + 1, mask=offs < n)
'''


def hostile_analysis(tmp_path):
    from tritonscope.analyses.analysis import analyze
    from tritonscope.pipeline.triton_compile import compile_artifact
    from tritonscope.inputs.kernels import Request
    from tritonscope.pipeline.binding import build_spec

    f = tmp_path / "evil_kernels.py"
    f.write_text(HOSTILE_KERNEL)
    req = Request(f"{f}:__proto__", args={"x_ptr": "*fp32", "n": "1024"}, constexprs={"BLOCK": "64"},
                  arch="sm_90a")
    return analyze(compile_artifact(build_spec(req, "sm_90a")))


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    return hostile_analysis(tmp_path_factory.mktemp("hostile"))


def test_hostile_source_cannot_inject_html(hostile, tmp_path):
    from tritonscope.outputs.save import save_report

    assert "</pre><script>" in hostile.artifact.stages["python"]
    text = save_report(hostile, tmp_path / "h.html").read_text()
    tags = _tags(text)
    assert [t for t, _ in tags].count("script") == 1
    assert not [t for t, _ in tags if t in ("img", "svg", "iframe", "details")]
    assert not [a for _, a in tags if any(k.startswith("on") for k in a)], "no event-handler attributes"
    assert "&lt;/pre&gt;&lt;script&gt;window.__pwned = 1; alert(1)&lt;/script&gt;" in text
    assert "<title>__proto__ ·" in text
    # the one script is ours: its hash is what the CSP allows
    from tritonscope.outputs.render.html import _JS, _csp

    assert _csp(_JS) in text.replace("&#x27;", "'")


def test_hostile_source_cannot_break_markdown(hostile, tmp_path):
    from tritonscope.outputs.save import save_report

    text = save_report(hostile, tmp_path / "h.md").read_text()
    # the comment holds a ``` run: the Python stage's fence is longer, so the code block cannot end early
    fence = re.search(r"^(`{4,})python$", text, re.M)
    assert fence, "a fence longer than the backtick run in the source"
    assert "</pre><script>" in text[fence.end():text.index("\n" + fence.group(1) + "\n", fence.end())]
    # outside code blocks, the only HTML is ours
    outside = re.sub(r"^(`{3,})[a-z]*\n.*?\n\1$", "", text, flags=re.M | re.S)
    assert {t for t, _ in _tags(outside)} == {"details", "summary", "sub"}
    assert "javascript:" not in outside and "__proto__" not in outside and "\\_\\_proto\\_\\_" in outside
    assert outside.count("<details>") == outside.count("</details>") == len(hostile.parsed)


def test_hostile_report_round_trips_through_show(hostile, tmp_path):
    from tritonscope.outputs.save import save_report

    path = save_report(hostile, tmp_path / "h.json")
    r = _cli("show", str(path), "--stage", "python", "--width", "150", "--no-color")
    assert r.exit_code == 0, r.output
    assert "</pre><script>" in r.output and "__proto__" in r.output


# --------------------------------------------------------------------------
# tritonscope compile --save / tritonscope show
# --------------------------------------------------------------------------


def _without_timing(text: str) -> str:
    return re.sub(r"compiled in [0-9.]+ s", "compiled in _ s", text)


def _rstrip_lines(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.splitlines())


VIEW_OPTIONS = [
    [],
    ["--stage", "ttgir,ptx"],
    ["--stage", "none"],
    ["--view", "side-by-side", "--stages", "ttgir,ptx,sass"],
    ["--view", "walkthrough"],
    ["--view", "mix"],
    ["--line", "19"],
    ["--line", "17", "--stage", "ttgir,ptx"],
    ["--layouts", "--stage", "none"],
]


def test_compile_save_all_formats_and_show_matches(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("r.html", "r.md", "r.json", "r.txt"):
        r = _cli("compile", "matmul", "--block", "16", "--stage", "none", "--save", name)
        assert r.exit_code == 0, r.output
        assert (tmp_path / name).stat().st_size > 1000
    r = _cli("compile", "matmul", "--block", "16", "--stage", "none", "--save", "r.json")
    assert r.exit_code == ExitCode.OUTPUT_ERROR and "already exists" in r.output and "--force" in r.output
    r = _cli("compile", "matmul", "--block", "16", "--save", "k.json", "--keep-paths", "--stage", "none",
             "--layouts")
    assert r.exit_code == 0
    for opts in VIEW_OPTIONS:
        live = _cli("compile", "matmul", "--block", "16", "--width", "120", "--no-color", *opts)
        shown = _cli("show", "k.json", "--width", "120", "--no-color", *opts)
        assert live.exit_code == 0 and shown.exit_code == 0, shown.output
        assert _without_timing(shown.output) == _without_timing(live.output), opts
    # a relative-path report shows the same views, with the kernel's folder as '.'
    # (the live output and the report come from one compile: Triton's cache may hand another
    # compile of the same source the paths of a different file)
    from tritonscope.outputs.portable import kernel_folders
    from tritonscope.outputs.report import load_analysis

    # (--raw: the lines that carry paths, `#loc`, `!DIFile`, `//## File`, are folded noise otherwise;
    # PTX's DWARF bytes spell the path out, so its raw view differs beyond the path lines)
    raw = ("--raw", "--stage", "python,ttir,ttgir,llir,sass")
    live = _cli("compile", "matmul", "--block", "16", "--width", "120", "--no-color", "--save", "k2.json",
                "--keep-paths", *raw)
    folders = kernel_folders(load_analysis("k2.json"))
    assert _cli("show", "k2.json", "--stage", "none", "--save", "r2.json").exit_code == 0
    shown = _cli("show", "r2.json", "--width", "120", "--no-color", *raw)
    live_lines = _without_timing(live.output).splitlines()
    shown_lines = _without_timing(shown.output).splitlines()
    assert len(live_lines) == len(shown_lines)
    differ = [(a, b) for a, b in zip(live_lines, shown_lines) if a != b]
    assert differ, "the live view shows the kernel's folder somewhere"
    for a, b in differ:  # only paths differ (a long path is cropped at the terminal's width)
        cut = [f for f in folders if f[:12] in a]
        assert cut and "./" in b or '"."' in b, (a, b)
        assert a.replace(cut[0], ".").rstrip() == b.rstrip() or "…" in a, (a, b)
    # show can save again, in any format
    r = _cli("show", "r.json", "--stage", "none", "--save", "again.html")
    assert r.exit_code == 0 and (tmp_path / "again.html").read_text() == (tmp_path / "r.html").read_text()


def test_show_json_is_the_report(tmp_path, matmul):
    from tritonscope.outputs.report import analysis_to_dict
    from tritonscope.outputs.save import save_report

    path = save_report(matmul, tmp_path / "r.json", keep_paths=True)
    r = _cli("show", str(path), "--json")
    assert r.exit_code == 0
    assert json.loads(r.output)["artifact"] == json.loads(json.dumps(analysis_to_dict(matmul)["artifact"]))


def test_show_never_imports_triton(tmp_path):
    """`tritonscope show` renders a report with triton (and torch) absent from sys.modules."""
    report = ROOT / "tests" / "data" / "report_small.json"
    code = textwrap.dedent(f"""
        import sys
        class Block:  # make any import of triton or torch fail loudly
            def find_spec(self, name, path=None, target=None):
                if name.split('.')[0] in ('triton', 'torch'):
                    raise ImportError('show imported ' + name)
        sys.meta_path.insert(0, Block())
        from typer.testing import CliRunner
        from tritonscope.cli import app
        for args in (["show", {str(report)!r}, "--width", "100", "--no-color"],
                     ["show", {str(report)!r}, "--view", "walkthrough", "--layouts"],
                     ["show", {str(report)!r}, "--view", "side-by-side", "--stages", "ttgir,ptx,sass"],
                     ["show", {str(report)!r}, "--line", "14"],
                     ["show", {str(report)!r}, "--view", "mix", "--json"],
                     ["show", {str(report)!r}, "--save", {str(tmp_path / "x.html")!r}],
                     ["show", {str(report)!r}, "--stage", "none", "--save", {str(tmp_path / "x.md")!r}]):
            r = CliRunner().invoke(app, args)
            assert r.exit_code == 0, (args, r.output, r.exception)
        bad = sorted(m for m in sys.modules if m.split('.')[0] in ('triton', 'torch'))
        assert not bad, bad
        print("ok", len(r.output))
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("ok")


def test_checked_in_report_is_current(matmul):
    """tests/data/report_small.json (used by the no-Triton tests) still loads: a version-1 report, migrated."""
    from tritonscope.outputs.report import load_analysis

    assert json.loads((ROOT / "tests" / "data" / "report_small.json").read_text())["schema_version"] == 1
    small = load_analysis(ROOT / "tests" / "data" / "report_small.json")
    assert small.summary.registers == 26 and small.summary.spills.spills is False
    assert small.artifact.spec.kernel == "add_kernel" and small.artifact.spec.file == "./vector_add.py"
    assert small.layouts, "saved with --layouts, so show --layouts and the HTML drawings run without Triton"
    assert set(small.parsed) == set(small.artifact.stages)


def test_readme_examples_run(tmp_path, monkeypatch):
    """Every command in the README's Reports and show sections runs as written, in order."""
    import shlex

    readme = (ROOT / "docs" / "reports.md").read_text()
    commands = []
    for title in ("## Reports", "## show"):
        section = readme[readme.index(title + "\n"):]
        section = section[:section.find("\n## ", 1)]
        for block in re.findall(r"```bash\n(.*?)```", section, re.S):
            commands += [ln.split("  #")[0].strip() for ln in block.splitlines() if ln.strip()]
    assert len(commands) >= 8
    monkeypatch.chdir(tmp_path)
    for command in commands:
        argv = shlex.split(command)
        assert argv[0] == "tritonscope"
        r = _cli(*argv[1:], "--width", "120") if "--width" not in argv else _cli(*argv[1:])
        assert r.exit_code == 0, (command, r.output)
    for name in ("r.html", "r.md", "r.json", "r2.html"):
        assert (tmp_path / name).stat().st_size > 1000
    assert json.loads((tmp_path / "r.json").read_text())["layouts"], "--layouts saved the layouts"


def test_html_diff_side_by_side(compiled, matmul, tmp_path):
    """render_html_diff: A and B in two columns, removed runs next to the added runs that replace them."""
    from tritonscope.analyses.analysis import analyze
    from tritonscope.analyses.diff import diff_analyses
    from tritonscope.outputs.render.html import render_html_diff

    d = diff_analyses(matmul, analyze(compiled("matmul", block=32)))
    text = render_html_diff(d)
    assert text == render_html_diff(d.to_dict())
    tags = _tags(text)
    assert not [t for t, _ in tags if t in ("script", "link", "img", "iframe")]
    assert not [a for _, a in tags if "src" in a or "href" in a]
    ptx = next(s for s in d.stages if s.key == "ptx")
    assert not ptx.identical
    section = text[text.index('<h2 data-stage="ptx">'):]
    section = section[:section.index("</table>")]
    rows = re.findall(r"<tr>(.*?)</tr>", section)
    # every row has the A cells then the B cells; a changed pair sits on one row
    pairs = [r for r in rows if 'class="del"' in r and 'class="add"' in r]
    assert pairs and all(r.index('class="del"') < r.index('class="add"') for r in pairs)
    assert any("cp.async.ca" in r.split('class="add"')[0] and "cp.async.cg" in r.split('class="add"')[1]
               for r in pairs), "BLOCK 16 -> 32 turns 4-byte cp.async.ca into 16-byte cp.async.cg, side by side"
    removed = sum(r.count('class="del"') for r in rows)
    added = sum(r.count('class="add"') for r in rows)
    assert (removed, added) == (ptx.removed, ptx.added)
    # hostile text in a diff is escaped
    evil = d.to_dict()
    evil["kernel"] = "<script>alert(1)</script>"
    evil["stages"][0]["diff"] = [["-", "</td></tr><img src=x onerror=alert(1)>", 1, None, ["<b>"]]]
    evil["stages"][0]["identical"] = False
    evil["stages"][0]["missing"] = None
    hostile = render_html_diff(evil)
    assert not [t for t, _ in _tags(hostile) if t in ("script", "img", "b")]
    assert "&lt;/td&gt;&lt;/tr&gt;&lt;img src=x onerror=alert(1)&gt;" in hostile

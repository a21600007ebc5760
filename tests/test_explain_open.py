"""explain and check on what `open` reads, and explain's verdicts in saved reports (issue 14).

Found kernels: the capture checked in under tests/data/capture/ (made on an
H200), a Triton cache filled by one compile of this session (conftest's
`compiled`: its Triton cache is the session's TRITON_CACHE_DIR), and that
cache entry's .ttgir and .ptx as lone stage files.  Reports: one
`compile --explain --save` per format the test reads back, and `show`.
Each test fails if its verdict, its "not judged" reason or its section
disappears or turns wrong.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import DATA, ROOT
from tritonscope.cli import app
from tritonscope.core.errors import ExitCode

CAPTURE = DATA / "capture"
# the plain add_kernel launched with a 16-byte-misaligned x (tests/gpu/capture_programs.py run_add(offset=1))
MISALIGNED_ADD = "01c9a1bc"
runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def as_json(*args) -> dict:
    result = invoke(*args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def verdict(data: dict, kind: str, **where) -> dict:
    found = [v for v in data["verdicts"] if v["kind"] == kind and all(v["facts"].get(k) == x for k, x in where.items())]
    assert found, f"no {kind} verdict {where or ''} in: " + "; ".join(f"{v['kind']}: {v['title']}"
                                                                      for v in data["verdicts"])
    return found[0]


def skipped(data: dict) -> dict[str, str]:
    return {s["kind"]: s["reason"] for s in data["skipped"]}


# --------------------------------------------------------------------------
# Which TARGET is which
# --------------------------------------------------------------------------


def test_found_targets_are_told_from_kernels_to_compile(tmp_path, monkeypatch):
    from tritonscope.analyses.explain.run import is_found_target

    monkeypatch.chdir(tmp_path)
    (tmp_path / "cache").mkdir()
    (tmp_path / "matmul").mkdir()  # a folder named like a sample: the sample wins, as for every command
    for found in ("cache", "./matmul", "kernel.ttgir", "k.PTX", "x/y.cubin", "~/.triton/cache", "missing/dir"):
        assert is_found_target(found), found
    for kernel in ("matmul", "vector_add", "kernels.py", "kernels.py:add_kernel", "a/b/k.py:k", "nosuchsample"):
        assert not is_found_target(kernel), kernel
    # a missing place says so, as `open` does; a stage-file option on a kernel target is refused
    assert invoke("explain", tmp_path / "nope").exit_code == ExitCode.NOT_FOUND
    assert invoke("explain", tmp_path / "nope.ttgir").exit_code == ExitCode.NOT_FOUND
    assert invoke("explain", "matmul", "--kernel", "x").exit_code == ExitCode.USAGE
    refused = invoke("explain", CAPTURE, "-k", MISALIGNED_ADD, "--block", "16")
    assert refused.exit_code == ExitCode.USAGE and "--block" in refused.output


# --------------------------------------------------------------------------
# A capture (checked in)
# --------------------------------------------------------------------------


def test_capture_needs_a_kernel_named_as_open_names_them():
    many = invoke("explain", CAPTURE)
    assert many.exit_code == ExitCode.USAGE and "holds 5 kernels" in many.output and "--kernel" in many.output
    same_name = invoke("explain", CAPTURE, "--kernel", "add_kernel")
    assert same_name.exit_code == ExitCode.USAGE and "2 kernels match" in same_name.output
    unknown = invoke("explain", CAPTURE, "-k", "no_such_kernel")
    assert unknown.exit_code == ExitCode.NOT_FOUND and "No kernel 'no_such_kernel'" in unknown.output


def test_capture_kernel_is_explained_from_its_stages(monkeypatch):
    monkeypatch.chdir(ROOT)  # the capture names its program relative to where it ran
    data = as_json("explain", "tests/data/capture", "--kernel", MISALIGNED_ADD, "--shape", "4096")
    assert data["source"] == "captured kernel add_kernel (01c9a1bcb1eb) in tests/data/capture"
    assert data["kernel"] == "add_kernel" and data["arch"] == "sm_90a" and data["lacks"] == []
    # the launch's misaligned x: a 32-bit load where the tile allows 128, and why
    g = verdict(data, "global access")
    assert g["severity"] == "warn" and g["facts"]["pointers_without_divisibility"] == ["x_ptr"]
    assert g["facts"]["min_bits"] == 32 and g["python_lines"] == [23]
    # its fix is a launch change, which a found kernel's recompile cannot make: said, not guessed
    assert not g["fix_checked"] and "(not checked: a recompile keeps the launch's argument alignment" in g["fix"]
    occupancy = verdict(data, "occupancy")
    assert occupancy["facts"]["blocks_per_sm"] == 16 and occupancy["facts"]["limited_by"] == "threads"
    assert verdict(data, "registers")["facts"]["registers"] == 26
    assert verdict(data, "spills")["severity"] == "ok"
    # a shape needs a launch: the program has no EXAMPLES entry, so waves and roofline are not judged
    why = skipped(data)
    assert set(why) == {"waves", "roofline"}
    assert "capture_programs.py has no EXAMPLES entry for add_kernel" in why["waves"]


def test_capture_kernel_in_the_terminal_and_in_check(tmp_path):
    out = invoke("explain", CAPTURE, "-k", MISALIGNED_ADD, "--width", "120").output
    assert "from: captured kernel add_kernel (01c9a1bcb1eb)" in out
    assert "! global access  narrow global accesses: line 23" in out and "not checked:" in out
    res = invoke("check", CAPTURE, "-k", MISALIGNED_ADD, "-e", "width>=128", "-e", "no-spills", "-e",
                 "registers<=32", "--junit", tmp_path / "c.xml", "--json")
    assert res.exit_code == ExitCode.CHECK_FAILED
    results = {r["expr"]: r for r in json.loads(res.stdout)["results"]}
    assert not results["width>=128"]["held"] and results["width>=128"]["actual"] == "32-bit"
    assert results["no-spills"]["held"] and results["registers<=32"]["held"]
    assert (tmp_path / "c.xml").read_text().count("<testcase") == 3
    assert invoke("check", CAPTURE, "-k", MISALIGNED_ADD).exit_code == ExitCode.USAGE  # no EXAMPLES to read


def test_check_recompiles_a_captured_kernel_for_each_arch():
    """--arch on a found kernel: sources.recompile from its captured TTIR, then the same expectations."""
    res = invoke("check", CAPTURE, "-k", "e813dd35", "--arch", "sm_80", "-e", "width>=128", "-e", "no-spills",
                 "--json")
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert {r["arch"] for r in data["results"]} == {"sm_80"} and data["passed"]


# --------------------------------------------------------------------------
# A Triton cache filled by a compile of this session
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def unpipelined(compiled) -> tuple[Path, str]:
    """(Triton's cache folder, the kernel's hash) of an sm_80 matmul with num_stages=1: its loop is not
    pipelined, and the fix (num_stages=3) is checked by recompiling the cache's TTIR."""
    art = compiled("matmul", block=16, num_stages=1, arch="sm_80")
    cache = Path(os.environ["TRITON_CACHE_DIR"])
    assert _entry(cache, art.kernel_hash).is_dir()
    return cache, art.kernel_hash


def _entry(cache: Path, kernel_hash: str) -> Path:
    return next(p.parent for p in cache.glob("*/matmul_kernel.json")
                if json.loads(p.read_text()).get("hash") == kernel_hash)


def test_cache_entry_with_a_fix_checked_by_recompiling(unpipelined):
    cache, kernel_hash = unpipelined
    data = as_json("explain", cache, "--kernel", kernel_hash[:16], "--shape", "256x256x256")
    assert data["source"].startswith("cache entry matmul_kernel (") and data["arch"] == "sm_80"
    assert data["lacks"] == []
    loop = verdict(data, "pipelining")
    assert loop["severity"] == "warn" and loop["facts"]["python_line"] == 16 and loop["facts"]["async_copies"] == 0
    # sources.recompile compiled the cache's TTIR with num_stages=3: the loop pipelines, and it fits
    assert loop["fix_checked"] and loop["facts"]["fix"]["pipelined"] and loop["facts"]["fix"]["fits"]
    assert data["checked_compiles"] >= 1
    assert verdict(data, "shared memory")["facts"]["dynamic"] == 1024
    assert verdict(data, "tensor cores")["facts"]["unit"] == "mma"
    # Triton's cache keeps no constexprs (BLOCK is folded into the IR): a shape's grid would be a guess
    why = skipped(data)
    assert set(why) == {"waves", "roofline"} and "does not record its constexprs (BLOCK" in why["waves"]


def test_emitted_folder_has_its_constexprs_and_judges_a_shape(compiled, tmp_path):
    """`--emit` keeps the constexprs in the metadata: the kernel's file's EXAMPLES launch gives the grid."""
    from tritonscope.inputs.sources import emit_files

    emit_files(compiled("matmul", block=16, num_stages=1, arch="sm_80"), tmp_path / "k")
    data = as_json("explain", tmp_path / "k", "--shape", "1024x1024x1024", "--gpu", "A100", "--no-check-fixes")
    assert "waves" not in skipped(data) and "roofline" not in skipped(data)
    waves = verdict(data, "waves")
    assert waves["facts"]["tiles"] == (1024 // 16) ** 2 and waves["facts"]["sms"] == 108
    assert verdict(data, "roofline")["facts"]["flops"] == 2 * 1024 ** 3


# --------------------------------------------------------------------------
# Single stage files: what they lack is said, and nothing is guessed
# --------------------------------------------------------------------------


def _lone(unpipelined, ext: str, tmp_path: Path) -> Path:
    src = _entry(*unpipelined) / f"matmul_kernel.{ext}"
    dst = tmp_path / src.name  # alone in its folder
    shutil.copy(src, dst)
    return dst


def test_lone_ttgir(unpipelined, tmp_path):
    path = _lone(unpipelined, "ttgir", tmp_path)
    data = as_json("explain", path)
    assert data["source"] == f"stage file {path}"
    assert {"ptx", "the cubin", "Triton's metadata (.json)"} <= set(data["lacks"])
    why = skipped(data)
    assert {"occupancy", "registers", "spills", "global access"} <= set(why)
    assert "needs the cubin" in why["registers"] and "which this stage file does not have" in why["registers"]
    assert "needs the PTX" in why["global access"]
    # shared memory: the TTGIR's buffers are a lower bound, not Triton's figure
    shared = verdict(data, "shared memory")
    assert shared["severity"] == "info" and shared["facts"]["lower_bound"] == 1024 and shared["facts"]["dynamic"] is None
    # what the TTGIR holds is judged; its fix has no source to recompile
    loop = verdict(data, "pipelining")
    assert loop["severity"] == "warn" and not loop["fix_checked"]
    assert "(not checked: no source to recompile" in loop["fix"]
    assert verdict(data, "tensor cores")["facts"]["unit"] == "mma"
    # check: what cannot be known does not hold, and says why
    res = invoke("check", path, "-e", "pipelined", "-e", "registers<=64", "-e", "fits", "--json")
    results = {r["expr"]: r for r in json.loads(res.stdout)["results"]}
    assert res.exit_code == ExitCode.CHECK_FAILED
    assert results["registers<=64"]["actual"].startswith("not known: needs the cubin")
    assert results["fits"]["actual"].startswith("not known: at least 1,024 B")
    assert not results["pipelined"]["held"] and "not pipelined" in results["pipelined"]["actual"]


def test_found_kernel_reports_name_no_absolute_path_and_no_guessed_stages(unpipelined, tmp_path):
    """A lone .ttgir does not record num_stages: the header says `s?` and no verdict quotes a stage count;
    its report, saved from an absolute path, keeps no absolute path (unless --keep-paths)."""
    path = _lone(unpipelined, "ttgir", tmp_path)
    data = as_json("explain", path)
    assert " s? " in f" {data['label']} "
    assert all(v["facts"].get("num_stages") is None for v in data["verdicts"] if v["kind"] == "pipelining")
    for name in ("r.json", "r.html", "r.md"):
        assert invoke("explain", str(path.resolve()), "--save", str(tmp_path / name)).exit_code == 0
        assert str(tmp_path.resolve()) not in (tmp_path / name).read_text(), name
    assert invoke("explain", str(path.resolve()), "--save", str(tmp_path / "k.json"), "--keep-paths").exit_code == 0
    assert str(tmp_path.resolve()) in (tmp_path / "k.json").read_text()


def test_explain_on_amd_files_and_targets(compiled):
    """AMD: an hsaco alone and a compile for gfx942 are explained (VGPRs, not a cubin; no crash)."""
    data = as_json("explain", DATA / "open_amd" / "gfx1100_vector_add" / "add_kernel.hsaco")
    assert "ptx" not in data["lacks"] and "sass" not in data["lacks"] and "amdgcn" in data["lacks"]
    regs = verdict(data, "registers")
    assert regs["title"].endswith("VGPRs per lane") and "cuobjdump" not in json.dumps(regs["evidence"])
    result = invoke("explain", "matmul", "--block", "32", "--arch", "gfx942", "--no-check-fixes",
                    "--shape", "1024x1024x1024", "--json")
    assert result.exit_code == 0, result.output
    roof = [v for v in json.loads(result.stdout)["verdicts"] if v["kind"] == "roofline"]
    # gfx942's reference part is the MI300X of core/gpus.json, as for `compile --predict` (one GPU table)
    facts = roof[0]["facts"]
    assert facts["gpu"] == "MI300X" and facts["peak_tflops"] == 1307.4 and facts["bandwidth_gbs"] == 5300
    assert "on MI300X" in roof[0]["title"]


def test_lone_ptx(unpipelined, tmp_path):
    path = _lone(unpipelined, "ptx", tmp_path)
    data = as_json("explain", path)
    assert "ttgir" in data["lacks"]
    # from the PTX alone: the access widths and the MMA instructions
    g = verdict(data, "global access")
    assert g["facts"]["from"] == "ptx" and g["facts"]["min_bits"] == 32 and g["severity"] == "info"
    tc = verdict(data, "tensor cores")
    assert tc["facts"]["from"] == "ptx" and tc["facts"]["unit"] == "mma" and tc["python_lines"] == [19]
    assert tc["facts"]["instruction"].startswith("mma.sync.aligned.m16n8k16")
    why = skipped(data)
    assert {"shared memory", "occupancy", "registers", "spills", "pipelining", "bank conflicts"} <= set(why)
    assert "needs the TTGIR (its loops and async copies)" in why["pipelining"]
    res = invoke("check", path, "-e", "tensor-cores", "-e", "width>=32")
    assert res.exit_code == 0, res.output
    res = invoke("check", path, "-e", "no-spills", "--width", "160")
    assert res.exit_code == ExitCode.CHECK_FAILED and "not known: needs the cubin or the SASS" in res.output


# --------------------------------------------------------------------------
# Saved reports: compile --explain, show, and old reports
# --------------------------------------------------------------------------

REPORT_ARGS = ("compile", "matmul", "--block", "16", "-s", "1", "--arch", "sm_80", "--explain", "--stage", "none")


@pytest.fixture(scope="module")
def explained_report(tmp_path_factory) -> tuple[Path, dict]:
    """One `compile --explain --json --save r.json`: (the report, what --json printed)."""
    folder = tmp_path_factory.mktemp("explain-report")
    res = invoke(*REPORT_ARGS, "--json", "--save", folder / "r.json")
    assert res.exit_code == 0, res.output
    return folder / "r.json", json.loads(res.output)


def test_compile_explain_json_report(explained_report):
    path, printed = explained_report
    data = json.loads(path.read_text())
    assert data["schema"] == "tritonscope.report" and data["schema_version"] == 2
    assert printed["explain"]["verdicts"] == json.loads(json.dumps(data["explain"]["verdicts"]))
    explain = data["explain"]
    assert explain["kernel"] == "matmul_kernel" and explain["file"] == "./matmul.py"  # paths relative, as the report's
    loop = verdict(explain, "pipelining")
    assert loop["severity"] == "warn" and loop["fix_checked"] and loop["facts"]["fix"]["num_stages"] == 3
    assert explain["checked_compiles"] >= 1 and explain["skipped"] == [] and explain["source"] == ""


def test_show_replays_the_explain_section(explained_report, tmp_path):
    path, _ = explained_report
    res = invoke("show", path, "--stage", "none", "--width", "120")
    assert res.exit_code == 0, res.output
    out = res.output
    assert out.index("Explain") > out.index("occupancy")   # after the summary
    assert "! pipelining     loop at line 16 is not pipelined" in out and "fix (checked): num_stages=3" in out
    assert json.loads(invoke("show", path, "--json").output)["explain"] == json.loads(path.read_text())["explain"]
    for ext in ("md", "html", "txt"):
        assert invoke("show", path, "--stage", "none", "--save", tmp_path / f"r.{ext}").exit_code == 0
    md = (tmp_path / "r.md").read_text()
    assert "### Explain" in md and "#### ! pipelining: loop at line 16 is not pipelined" in md
    assert "**fix (checked):** num\\_stages=3" in md and "python:16      for k in range(0, K, BLOCK):" in md
    html = (tmp_path / "r.html").read_text()
    assert '<section id="explain"><h2>Explain</h2>' in html and 'class="verdict sev-warn"' in html
    assert '<button type="button" class="go" data-py="16">python:16</button>' in html  # selects the Python line
    txt = (tmp_path / "r.txt").read_text()
    assert "Explain" in txt and "! pipelining" in txt


def test_compile_explain_html_and_terminal(tmp_path):
    res = invoke(*REPORT_ARGS, "--save", tmp_path / "r.html", "--width", "120")
    assert res.exit_code == 0, res.output
    assert "Explain" in res.output and "! pipelining" in res.output
    html = (tmp_path / "r.html").read_text()
    assert 'id="explain"' in html and "not pipelined" in html and "fix (checked):" in html
    assert "Explain" not in invoke("compile", "matmul", "--block", "16", "-s", "1", "--arch", "sm_80", "--stage",
                                   "none", "--width", "120").output


def test_reports_without_the_section_still_open(tmp_path):
    old = DATA / "report_small.json"     # schema version 1
    res = invoke("show", old, "--stage", "none")
    assert res.exit_code == 0 and "Explain" not in res.output
    assert invoke("show", old, "--save", tmp_path / "v2.json").exit_code == 0   # version 2, no "explain"
    data = json.loads((tmp_path / "v2.json").read_text())
    assert data["schema_version"] == 2 and "explain" not in data
    assert invoke("show", tmp_path / "v2.json", "--stage", "none").exit_code == 0


def test_a_damaged_explain_section_is_a_damaged_report(explained_report, tmp_path):
    path, _ = explained_report
    data = json.loads(path.read_text())
    data["explain"]["verdicts"][0]["severity"] = "awful"
    (tmp_path / "bad.json").write_text(json.dumps(data))
    res = invoke("show", tmp_path / "bad.json")
    assert res.exit_code == ExitCode.BAD_INPUT_FILE and "explain.verdicts[0].severity" in res.output
    data["explain"]["verdicts"][0]["severity"] = "ok"
    data["explain"]["verdicts"][0]["evidence"] = [["ttgir", "x", "text"]]
    (tmp_path / "bad.json").write_text(json.dumps(data))
    res = invoke("show", tmp_path / "bad.json")
    assert res.exit_code == ExitCode.BAD_INPUT_FILE and "evidence line" in res.output


def test_show_of_an_explained_report_imports_no_triton(explained_report, tmp_path):
    from test_imports import _imported_after

    path, _ = explained_report
    assert _imported_after(["show", str(path), "--stage", "none", "--save", "r.md"], tmp_path) == []
    assert "### Explain" in (tmp_path / "r.md").read_text()


def test_an_evidence_line_selects_its_python_line_in_the_page(explained_report, tmp_path):
    """In the HTML report, a Python line in a verdict's evidence selects that line in every pane (Chromium)."""
    from test_browser import Browser, _chromium

    exe = _chromium()
    if not exe:
        pytest.skip("chromium is not installed (Debian: apt-get install -y chromium)")
    path, _ = explained_report
    assert invoke("show", path, "--stage", "none", "--save", tmp_path / "r.html").exit_code == 0
    browser = Browser(exe, str(tmp_path / "profile"))
    try:
        browser.open((tmp_path / "r.html").resolve().as_uri())
        browser.eval("new Promise(r => { const f = () => document.body.dataset.ready ? r(1) : setTimeout(f, 20); f(); })")
        browser.eval("document.querySelector('#explain button[data-py=\"16\"]').click()")
        assert browser.eval("document.querySelector('.pane[data-stage=\"python\"] .l.sel').dataset.py") == "16"
        assert browser.eval("document.querySelectorAll('.l.hl').length") > 1   # the loop's lines in every stage
    finally:
        browser.close()

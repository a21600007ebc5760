"""One GPU table (core/gpus.json), one loader (core/gpus.py), one --gpu option (commands/options.py).

explain's roofline, bench's % of peak, the cost model and the stand-in driver read the same figures; a
second table in the package, or a second --gpu declaration, fails here.
"""

from __future__ import annotations

import ast
import json

import pytest
from typer.testing import CliRunner

from conftest import ROOT
from tritonscope.cli import app

PACKAGE = ROOT / "tritonscope"


def _py_files():
    return sorted(p for p in PACKAGE.rglob("*.py") if p.is_file())


def _text(path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:  # moved while the tree was walked
        return ""


def test_the_table_has_a_source_for_every_gpu_and_every_arch_a_reference():
    from tritonscope.core.gpus import TABLE, gpu_table, reference_gpu
    from tritonscope.core.model import ARCHES

    assert TABLE == PACKAGE / "core" / "gpus.json"
    table = gpu_table()
    # the union of the two old tables: gpus.json's six and PEAKS' H100 NVL
    assert {"H100 SXM", "H100 PCIe", "H100 NVL", "H200", "A100", "B200", "MI300X"} <= set(table)
    for g in table.values():
        assert g.source.strip() and g.sms > 0 and g.arches and g.device.get("name"), g.name
        if g.has_peaks:
            assert set(g.tflops) >= {"fp16", "bf16", "fp32"} and g.gbs > 0, g.name
    for arch in ARCHES:  # the stand-in answers every arch as a part of the table
        assert reference_gpu(arch) is not None and arch in reference_gpu(arch).arches, arch
    assert reference_gpu("sm_90a").name == "H100 SXM" and reference_gpu("gfx942").name == "MI300X"
    nvl = table["H100 NVL"]
    assert nvl.tflops["fp16"] == 835.5 and nvl.gbs == 3900 and nvl.sms == 132


def test_no_other_module_holds_gpu_figures():
    """A grep of the package finds one GPU table: no module has a dict keyed by a known GPU's name, a literal
    peak ("gbs", "tflops", "sms" with a number), or an `sms=<number>` keyword; no other JSON has peaks."""
    from tritonscope.core.gpus import gpu_table

    names = {n.lower() for g in gpu_table().values() for n in (g.name, *g.aliases, g.device["name"])}
    found = []
    for path in _py_files():
        where = path.relative_to(ROOT)
        for node in ast.walk(ast.parse(_text(path))):
            if isinstance(node, ast.Dict):
                for k, v in zip(node.keys, node.values):
                    if not (isinstance(k, ast.Constant) and isinstance(k.value, str)):
                        continue
                    if k.value.lower() in names and isinstance(v, (ast.Dict, ast.Constant)):
                        found.append(f"{where}:{node.lineno}: a figure for {k.value!r}")
                    if k.value in ("gbs", "tflops", "sms") and isinstance(v, ast.Constant) \
                            and isinstance(v.value, (int, float)) and not isinstance(v.value, bool):
                        found.append(f"{where}:{node.lineno}: {k.value!r}: {v.value}")
            elif isinstance(node, ast.keyword) and node.arg == "sms" and isinstance(node.value, ast.Constant):
                found.append(f"{where}: sms={node.value.value}")
    for path in PACKAGE.rglob("*.json"):
        if path.name != "gpus.json" and '"gbs"' in _text(path):
            found.append(f"{path.relative_to(ROOT)}: peaks outside core/gpus.json")
    assert [p.relative_to(ROOT).as_posix() for p in PACKAGE.rglob("gpus.json")] == ["tritonscope/core/gpus.json"]
    assert not found, "GPU figures outside core/gpus.json:\n" + "\n".join(found)


def test_gpu_option_is_declared_once():
    """`--gpu` is typed once in the package, in commands/options.py, and every command that takes it uses it."""
    from tritonscope.commands import options

    declared = []
    for path in _py_files():
        for node in ast.walk(ast.parse(_text(path))):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "Option" \
                    and any(isinstance(a, ast.Constant) and a.value == "--gpu" for a in node.args):
                declared.append(f"{path.relative_to(ROOT).as_posix()}:{node.lineno}")
    assert len(declared) == 1 and declared[0].startswith("tritonscope/commands/options.py:"), \
        f"--gpu declared more than once (use commands.options.GpuOpt): {declared}"
    import typer.main

    cli = typer.main.get_command(app)
    takers = {name for name, cmd in cli.commands.items()
              if any("--gpu" in getattr(p, "opts", ()) for p in cmd.params)}
    assert takers == {"compile", "explain", "diff", "sweep", "tune", "capture"}
    for name in takers:
        param = next(p for p in cli.commands[name].params if "--gpu" in p.opts)
        assert param.help == options.GpuOpt.help, name
    assert "H100 NVL" in options.GpuOpt.help and "MI300X" in options.GpuOpt.help  # the hint is the table's


@pytest.mark.parametrize("argv", [["explain", "matmul", "--gpu", "H300"], ["compile", "matmul", "--gpu", "H300"],
                                  ["sweep", "matmul", "-c", "BLOCK=16,32", "--gpu", "H300"]])
def test_an_unknown_gpu_gets_one_message_and_hint(argv):
    from tritonscope.core.gpus import known_gpus

    res = CliRunner().invoke(app, argv)
    assert res.exit_code == 2 and "Unknown GPU 'H300'" in res.output and "Traceback" not in res.output
    assert "Did you mean" in res.output
    hint = " ".join(known_gpus().split())
    assert hint[:60] in " ".join(res.output.replace("│", " ").split())


@pytest.fixture(scope="module")
def mi300x():
    """explain and compile --predict for gfx942 with --gpu MI300X (one compile each)."""
    runner = CliRunner()
    explained = runner.invoke(app, ["explain", "matmul", "--gpu", "MI300X", "--arch", "gfx942", "--shape",
                                    "1024x1024x1024", "--no-check-fixes", "--json"])
    compiled = runner.invoke(app, ["compile", "matmul", "--gpu", "MI300X", "--arch", "gfx942", "--stage", "none",
                                   "--json"])
    return explained, compiled


def test_explain_and_compile_agree_on_the_mi300x(mi300x):
    """explain --gpu MI300X used to say "Unknown GPU" while compile and sweep knew it."""
    from tritonscope.cost import resolve_gpu

    explained, compiled = mi300x
    assert explained.exit_code == 0, explained.output
    verdicts = json.loads(explained.output)["verdicts"]
    roof = next(v for v in verdicts if v["kind"] == "roofline")["facts"]
    waves = next(v for v in verdicts if v["kind"] == "waves")["facts"]
    part = resolve_gpu("MI300X", "gfx942")    # what compile's cost model predicts with
    assert roof["gpu"] == waves["gpu"] == part.name == "MI300X"
    assert roof["peak_tflops"] == part.tflops[roof["peak_kind"]] == 1307.4 and roof["bandwidth_gbs"] == part.gbs
    assert waves["sms"] == part.sms == 304
    assert compiled.exit_code == 0, compiled.output
    assert json.loads(compiled.output)["prediction"]["gpu"] == part.name


def test_the_stand_in_answers_from_the_table():
    from tritonscope.core.gpus import find_gpu
    from tritonscope.core.model import reference_device

    d = reference_device("sm_90a")
    assert d["name"] == "NVIDIA H100 80GB HBM3" and d["sms"] == 132 and d["sm_clock_rate"] == 1980000
    assert d["capability"] == (9, 0) and d["max_shared_mem"] == 232448 and d["memory_bytes"] == 80 << 30
    pcie = reference_device("sm_90a", find_gpu("H100-PCIe"))
    assert pcie["name"] == "NVIDIA H100 PCIe" and pcie["sms"] == 114 and pcie["sm_clock_rate"] == 1755000
    assert reference_device("gfx1100")["sms"] == 48 and reference_device("sm_86")["name"] == "NVIDIA A10"

"""compile --predict / --gpu: the cost model's prediction in the summary, --json and saved reports."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from tritonscope.cli import app
from tritonscope.core.errors import ExitCode

runner = CliRunner()
ARGS = ["compile", "matmul_grouped", "--shape", "1024x1024x1024", "--stage", "none"]


def test_compile_predict_shows_the_prediction_and_saves_it(tmp_path):
    out = runner.invoke(app, [*ARGS, "--gpu", "H100", "--json"])
    assert out.exit_code == 0, out.output
    p = json.loads(out.output)["prediction"]
    assert p["gpu"] == "H100 SXM" and p["predicted_ms"] > 0 and p["regime"]
    assert p["bound_ms"] <= p["predicted_ms"]  # never faster than the roofline
    shown = runner.invoke(app, [*ARGS, "--predict", "--width", "200"])
    assert "predicted      " in shown.output and "ms on H100 SXM" in shown.output
    saved = tmp_path / "r.json"
    assert runner.invoke(app, [*ARGS, "--gpu", "H100", "--save", str(saved)]).exit_code == 0
    again = runner.invoke(app, ["show", str(saved), "--stage", "none", "--width", "200"])
    assert again.exit_code == 0 and "ms on H100 SXM" in again.output
    data = json.loads(saved.read_text())
    data["prediction"]["predicted_ms"] = "fast"
    saved.write_text(json.dumps(data))
    damaged = runner.invoke(app, ["show", str(saved)])
    assert damaged.exit_code == ExitCode.BAD_INPUT_FILE and "prediction.predicted_ms" in damaged.output


def test_without_predict_there_is_no_prediction():
    out = runner.invoke(app, [*ARGS, "--json"])
    assert "prediction" not in json.loads(out.output)


def test_an_unknown_gpu_is_refused_before_the_compile(monkeypatch):
    import tritonscope.pipeline.binding as binding

    monkeypatch.setattr(binding, "build_spec", lambda *a, **k: (_ for _ in ()).throw(AssertionError("compiled")))
    out = runner.invoke(app, [*ARGS, "--gpu", "V100"])
    assert out.exit_code == ExitCode.USAGE and "Unknown GPU 'V100'" in out.output


def test_diff_predicts_the_speed_ratio_and_says_why():
    out = runner.invoke(app, ["diff", "matmul_grouped", "--shape", "4096x4096x4096", "--a", "BLOCK_M=64",
                              "--b", "BLOCK_M=128", "--gpu", "H100", "--stage", "none", "--json"])
    assert out.exit_code == 0, out.output
    d = json.loads(out.output)
    rows = {r["name"]: r for r in d["summary"]}
    row = rows["predicted time (ms, H100 SXM)"]
    a, b = float(row["a"]), float(row["b"])
    assert row["delta"] == f"{b / a:.3g}x"
    said = [s for s in d["story"] if "predicted" in s]
    assert len(said) == 1 and f"{max(a, b) / min(a, b):.2f}x faster on H100 SXM" in said[0]
    plain = runner.invoke(app, ["diff", "matmul_grouped", "--shape", "4096x4096x4096", "--a", "BLOCK_M=64",
                                "--b", "BLOCK_M=128", "--stage", "none", "--json"])
    assert not any("predicted" in r["name"] for r in json.loads(plain.output)["summary"])


def test_explain_predict_gives_the_same_prediction_as_compile(tmp_path):
    out = runner.invoke(app, ["explain", "matmul_grouped", "--shape", "1024x1024x1024", "--gpu", "H100", "--predict",
                              "--json", "--no-check-fixes"])
    assert out.exit_code == 0, out.output
    explained = json.loads(out.output)["prediction"]
    compiled = json.loads(runner.invoke(app, [*ARGS, "--gpu", "H100", "--json"]).output)["prediction"]
    assert explained["predicted_ms"] == compiled["predicted_ms"] and explained["gpu"] == "H100 SXM"
    shown = runner.invoke(app, ["explain", "matmul_grouped", "--shape", "1024x1024x1024", "--predict",
                                "--no-check-fixes", "--width", "200"])
    assert "predicted: " in shown.output and " ms on " in shown.output


def test_the_api_compile_predicts_as_compile_does():
    """tritonscope.compile(..., gpu=) puts the same prediction on the analysis as `compile --gpu --json` prints."""
    import tritonscope

    out = runner.invoke(app, [*ARGS, "--gpu", "H100", "--json"])
    assert out.exit_code == 0, out.output
    result = tritonscope.compile("matmul_grouped", shape="1024x1024x1024", gpu="H100")
    assert result.analysis.prediction == json.loads(out.output)["prediction"]
    assert tritonscope.compile("matmul_grouped", shape="1024x1024x1024").analysis.prediction is None

"""Issue 33, the last three items, with no network (no pip or uv download runs here):

- managed environments count against tritonscope's cache cap: pruned least recently used first, one whole
  environment at a time, never one in use by a running process or being built; a pruned one is made again
  when next needed and the command says why; made with uv when uv is found (TRITONSCOPE_ENV_INSTALLER), else
  pip, and the environment's record says which;
- Triton 3.4's AMD backend needs an external ld.lld: which one a side gets (its wheel's, TRITON_HIP_LLD_PATH,
  the ziglang wheel's lld through a script that drops `-flavor gnu`, a system one), ziglang installed into a
  managed environment that needs it, and one hint in `versions` and `diff` when none can be had;
- `versions` on a capture whose module imports torch, with a side whose Python has no torch: compiled from the
  capture's recorded TTIR, as `open --recompile` does, and the report says so.

The real builds (a Triton 3.4.0 environment, its gfx942 compile through the ziglang lld) are in
tests/test_issue33_envs_real.py, which runs only where such an environment exists.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tritonscope.cli import app
from tritonscope.core import cache_prune as C
from tritonscope.versions import envs as E
from tritonscope.versions import lld as L

runner = CliRunner()
MiB = 1 << 20
CAPTURE = Path(__file__).parent / "data" / "capture"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITONSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TRITONSCOPE_CACHE_MAX_MB", raising=False)
    monkeypatch.delenv(E.INSTALLER_VARIABLE, raising=False)
    return tmp_path / "cache"


def _env(cache: Path, version: str, mib: int, used_ago: float) -> Path:
    """An environment folder as envs.create_env leaves it (its record, a file of `mib` MiB), last used `used_ago`
    seconds ago."""
    folder = cache / "triton-envs" / f"triton-{version}"
    (folder / "lib").mkdir(parents=True)
    (folder / "tritonscope-env.json").write_text(json.dumps({"requested": version, "triton": version}))
    (folder / "lib" / "libtriton.so").write_bytes(os.urandom(mib * MiB))
    C.touch_env(folder)
    t = time.time() - used_ago
    os.utime(folder / C.ENV_USED, (t, t))
    return folder


def _entry(cache: Path, name: str, kib: int, used_ago: float) -> Path:
    path = cache / "results" / f"{name * 40}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * (kib << 10))
    t = time.time() - used_ago
    os.utime(path, (t, t))
    return path


# --------------------------------------------------------------------------
# 1. Environments inside the cache cap
# --------------------------------------------------------------------------


def test_environments_count_against_the_cap_least_recently_used_first(cache):
    old = _env(cache, "3.4.0", 3, used_ago=3000)
    new = _env(cache, "3.6.0", 3, used_ago=10)
    entry = _entry(cache, "a", 512, used_ago=1000)   # used after the old environment, before the new one
    got = C.prune(cache, 4 * MiB)
    assert got.entries == 3 and got.size >= 6 * MiB + (512 << 10)
    assert not old.exists() and new.exists() and entry.exists()   # the old environment alone brings it under
    assert got.removed == 1 and got.freed >= 3 * MiB
    assert [p.name for p in (cache / "triton-envs").iterdir() if p.name.startswith(".removing")] == []
    note = C.pruned_note(cache / "triton-envs", "3.4.0")
    assert note.startswith("its environment was removed on ") and "size cap of 1024 MiB (the default), freeing 3.0 MiB" in note


def test_an_environment_in_use_by_a_running_process_is_never_pruned(cache):
    folder = _env(cache, "3.4.0", 2, used_ago=5000)
    code = ("import sys, time\nfrom tritonscope.core import cache_prune as C\n"
            f"assert C.use_env({str(folder)!r})\nprint('using', flush=True)\ntime.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent)})
    try:
        assert proc.stdout.readline().strip() == "using"
        assert C.in_use(folder)
        t = time.time() - 5000   # its use renewed it; make it the oldest again: still in use, so kept
        os.utime(folder / C.ENV_USED, (t, t))
        assert C.prune(cache, 0).removed == 0 and folder.exists()
    finally:
        proc.kill()
        proc.wait()
    assert not C.in_use(folder)            # the lock went with the process
    assert C.prune(cache, 0).removed == 1 and not folder.exists()


def test_an_environment_this_process_uses_is_kept_and_a_build_is_never_a_candidate(cache):
    mine = _env(cache, "3.4.0", 1, used_ago=5000)
    building = cache / "triton-envs" / ".building-3.5.1-1-abcd"
    building.mkdir()
    (building / "big").write_bytes(b"x" * MiB)
    assert C.use_env(mine)
    try:
        assert C.prune(cache, 0).removed == 0
        assert mine.exists() and building.exists()
    finally:
        os.close(C._held.pop(os.path.abspath(mine)))


def test_files_hard_linked_from_elsewhere_do_not_count(cache, tmp_path):
    """A uv-made environment's packages are hard links into uv's cache: removing it would not free them."""
    folder = _env(cache, "3.4.0", 0, used_ago=10)
    shared = tmp_path / "uv-cache-file"
    shared.write_bytes(b"x" * (2 * MiB))
    os.link(shared, folder / "lib" / "linked.so")
    (folder / "lib" / "own.py").write_bytes(b"y" * 1000)
    assert C.env_freed_bytes(folder) == 1000 + len((folder / "tritonscope-env.json").read_bytes())
    assert C.prune(cache, MiB).removed == 0   # 2 MiB on disk, but not this folder's to free


def test_a_pruned_environment_is_made_again_and_the_user_is_told(cache, monkeypatch):
    made = []

    def create(version, *, progress=None, pip_args=()):   # what create_env leaves, without pip
        made.append(version)
        folder = E.env_root() / f"triton-{version}"
        (folder / "bin").mkdir(parents=True)
        (folder / "bin" / "python").symlink_to(sys.executable)
        (folder / "tritonscope-env.json").write_text(json.dumps(
            {"requested": version, "triton": version, "triton_dir": os.path.dirname(__import__("triton").__file__)}))
        return E.cached_env(version)

    monkeypatch.setattr(E, "create_env", create)
    monkeypatch.setenv("TRITONSCOPE_CACHE_MAX_MB", "1")
    env = E.resolve("3.4.0")
    assert made == ["3.4.0"] and env.origin == "cache"
    os.close(C._held.pop(os.path.abspath(env.path)))   # this process is done with it
    t = time.time() - 3600
    os.utime(Path(env.path) / C.ENV_USED, (t, t))
    assert C.prune(cache, 0).removed == 1
    with pytest.raises(E.NotFoundError) as e:
        E.resolve("3.4.0", install=False)
    assert e.value.message.startswith("No environment for Triton 3.4.0 (--no-install: pip is not run): its "
                                      "environment was removed on ")
    assert "to keep tritonscope's cache under its size cap of 1 MiB (TRITONSCOPE_CACHE_MAX_MB), freeing " in \
        e.value.message
    said = []
    E.resolve("3.4.0", progress=said.append)
    assert made == ["3.4.0", "3.4.0"]
    assert any(s.startswith("Triton 3.4.0: its environment was removed on ") and s.endswith("; making it again")
               for s in said), said
    assert C.pruned_note(cache / "triton-envs", "3.4.0") is None   # made again: the note is gone
    os.close(C._held.pop(os.path.abspath(env.path)))


# --------------------------------------------------------------------------
# 1b. uv or pip
# --------------------------------------------------------------------------


def _fake_uv(folder: Path, output: str, rc: int = 0) -> Path:
    """A `uv` that logs its arguments and prints `output` (what uv prints), exiting `rc`."""
    folder.mkdir(parents=True, exist_ok=True)
    uv = folder / "uv"
    uv.write_text("#!/bin/sh\n"
                  'if [ "$1" = "--version" ]; then echo "uv 0.13.9"; exit 0; fi\n'
                  f'echo "$@" >> {folder}/argv\n'
                  f"cat <<'EOF'\n{output}\nEOF\nexit {rc}\n")
    uv.chmod(0o755)
    return uv


def _no_venv(monkeypatch, seen: list):
    import venv

    def create(self, path):   # a "venv" whose python is this one (which imports triton)
        seen.append(self.with_pip)
        os.makedirs(f"{path}/bin", exist_ok=True)
        Path(f"{path}/bin/python").write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
        os.chmod(f"{path}/bin/python", 0o755)

    monkeypatch.setattr(venv.EnvBuilder, "create", create)


def test_the_installer_is_uv_when_found_and_pip_when_asked_or_absent(tmp_path, monkeypatch):
    uv = _fake_uv(tmp_path / "uvbin", "")
    monkeypatch.setenv("PATH", f"{uv.parent}{os.pathsep}{os.environ['PATH']}")
    assert E.installer({}) == ("uv", str(uv))
    assert E.installer({E.INSTALLER_VARIABLE: "pip"}) == ("pip", None)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setattr(E.sys, "executable", str(tmp_path / "no" / "python"))
    assert E.installer({}) == ("pip", None)
    with pytest.raises(E.EnvError, match="no uv is found"):
        E.installer({E.INSTALLER_VARIABLE: "uv"})
    with pytest.raises(E.UsageError, match="give uv, pip or auto"):
        E.installer({E.INSTALLER_VARIABLE: "conda"})


def test_an_environment_is_made_with_uv_when_it_is_found(cache, tmp_path, monkeypatch):
    uv = _fake_uv(tmp_path / "uvbin", "Resolved 2 packages in 568ms\nInstalled 2 packages in 30ms\n + triton==3.4.0")
    monkeypatch.setenv("PATH", f"{uv.parent}{os.pathsep}{os.environ['PATH']}")
    with_pip: list = []
    _no_venv(monkeypatch, with_pip)
    said = []
    env = E.create_env("3.4.0", progress=said.append)
    assert with_pip == [False]   # uv installs into a venv that needs no pip of its own
    (argv,) = (uv.parent / "argv").read_text().splitlines()
    args = argv.split()
    assert args[:3] == ["pip", "install", "--python"] and args[4:] == ["triton==3.4.0"]
    assert args[3].endswith("/bin/python") and ".building-3.4.0-" in args[3]   # the new venv's, before its rename
    assert json.loads((Path(env.path) / "tritonscope-env.json").read_text())["installer"] == "uv 0.13.9"
    assert "Triton 3.4.0: uv install triton==3.4.0" in said and "Triton 3.4.0: Installed 2 packages in 30ms" in said
    assert said[-1] == "Triton 3.4.0: ready (made with uv 0.13.9)"


@pytest.mark.parametrize("output, words", [
    ("  × No solution found when resolving dependencies:\n  ╰─▶ Because there is no version of triton==3.2.7 and "
     "you require triton==3.2.7, we can conclude that your requirements are unsatisfiable.", "uv finds no such release"),
    ("error: Failed to fetch: `https://pypi.org/simple/triton/`\n  Caused by: error sending request for url",
     "the package index is not reachable"),
])
def test_a_uv_failure_leaves_nothing_and_says_why(cache, tmp_path, monkeypatch, output, words):
    uv = _fake_uv(tmp_path / "uvbin", output, rc=1)
    monkeypatch.setenv("PATH", f"{uv.parent}{os.pathsep}{os.environ['PATH']}")
    _no_venv(monkeypatch, [])
    with pytest.raises(E.EnvError, match=words):
        E.create_env("3.2.7")
    assert list((cache / "triton-envs").iterdir()) == []


def test_pip_when_asked_even_with_uv_on_path(cache, tmp_path, monkeypatch):
    uv = _fake_uv(tmp_path / "uvbin", "")
    monkeypatch.setenv("PATH", f"{uv.parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv(E.INSTALLER_VARIABLE, "pip")
    with_pip: list = []
    _no_venv(monkeypatch, with_pip)
    real = subprocess.Popen
    ran = []

    def popen(cmd, *a, **k):
        if "pip" in cmd and "install" in cmd:
            ran.append(cmd)
            cmd = [sys.executable, "-c", "print('Successfully installed triton-3.4.0')"]
        return real(cmd, *a, **k)

    monkeypatch.setattr(E.subprocess, "Popen", popen)
    env = E.create_env("3.4.0")
    assert with_pip == [True] and ran[0][1:4] == ["-m", "pip", "install"] and not (uv.parent / "argv").exists()
    assert json.loads((Path(env.path) / "tritonscope-env.json").read_text())["installer"] == "pip"


# --------------------------------------------------------------------------
# 2. ld.lld for Triton 3.4's AMD backend
# --------------------------------------------------------------------------

# The lines of Triton 3.4.0's triton/backends/amd/compiler.py that look for the linker (its wheel has no
# amd/llvm/bin/ld.lld), and the error it raises when none is there.
T34_LOOKUP = ('        lld = Path("/opt/rocm/llvm/bin/ld.lld")\n'
              "        raise Exception(\"ROCm linker /opt/rocm/llvm/bin/ld.lld not found. Set 'TRITON_HIP_LLD_PATH' "
              "to its path.\")\n")
T34_ERROR = ("Triton failed while compiling matmul_kernel: Exception: ROCm linker /opt/rocm/llvm/bin/ld.lld not "
             "found. Set 'TRITON_HIP_LLD_PATH' to its path.")


def _site(tmp_path: Path, *, own_lld=False, zig=False) -> Path:
    """A site-packages with a Triton 3.4-like AMD backend (and optionally its own ld.lld, or the ziglang wheel)."""
    site = tmp_path / "site-packages"
    amd = site / "triton" / "backends" / "amd"
    amd.mkdir(parents=True)
    (amd / "compiler.py").write_text(T34_LOOKUP)
    if own_lld:
        (amd / "llvm" / "bin").mkdir(parents=True)
        (amd / "llvm" / "bin" / "ld.lld").write_text("")
    if zig:
        _fake_zig(site)
    return site


def _fake_zig(site: Path) -> Path:
    """A `zig` that prints the arguments it got, one a line (as `zig ld.lld` would take them)."""
    (site / "ziglang").mkdir(parents=True, exist_ok=True)
    z = site / "ziglang" / "zig"
    z.write_text('#!/bin/sh\nfor a in "$@"; do echo "$a"; done\n')
    z.chmod(0o755)
    return z


def _triton_env(site: Path, origin="cache", path=None):
    return E.TritonEnv(python=str(site.parent / "bin" / "python"), triton="3.4.0", origin=origin, path=path,
                       backends=("amd", "nvidia"), backends_dir=str(site / "triton" / "backends"))


def test_which_tritons_need_an_external_ld_lld(tmp_path):
    import triton

    here = os.path.join(os.path.dirname(triton.__file__), "backends")
    assert L.needs_external_lld(here) is False    # 3.6 and 3.9 link in-process
    assert L.needs_external_lld(str(_site(tmp_path / "a") / "triton" / "backends")) is True
    assert L.needs_external_lld(str(_site(tmp_path / "b", own_lld=True) / "triton" / "backends")) is False
    assert L.needs_external_lld(str(tmp_path / "nothing")) is False and L.needs_external_lld(None) is False


def test_the_ld_lld_a_side_gets_first_found(tmp_path, monkeypatch):
    monkeypatch.setattr(L, "system_lld", lambda: None)
    bare = _triton_env(_site(tmp_path / "bare"), path=str(tmp_path / "bare"))
    assert L.choose(bare, {}) == (None, "none found")
    given = tmp_path / "my-ld.lld"
    given.write_text("")
    assert L.choose(bare, {"TRITON_HIP_LLD_PATH": str(given)}) == (str(given), "TRITON_HIP_LLD_PATH")
    monkeypatch.setattr(L, "system_lld", lambda: "/usr/bin/ld.lld-19")
    assert L.choose(bare, {}) == ("/usr/bin/ld.lld-19", "the system's")
    own = _triton_env(_site(tmp_path / "own", own_lld=True))
    assert L.choose(own, {}) == (None, "its wheel's own")
    site = _site(tmp_path / "zig", zig=True)
    env = _triton_env(site, path=str(tmp_path / "zig"))
    path, where = L.choose(env, {})
    assert where == "the ziglang wheel in its environment" and path == str(tmp_path / "zig" / "bin" / "ld.lld")
    # Triton runs [ld.lld, '-flavor', 'gnu', '-shared', IN, '-o', OUT]; `zig ld.lld` refuses -flavor: dropped
    out = subprocess.run([path, "-flavor", "gnu", "-shared", "in.o", "-o", "out.hsaco"], capture_output=True,
                         text=True, check=True).stdout.split()
    assert out == ["ld.lld", "-shared", "in.o", "-o", "out.hsaco"]
    # a Python of the user's is never written into: its script goes to tritonscope's cache
    monkeypatch.setenv("TRITONSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    user = _triton_env(site, origin="user")
    assert L.choose(user, {})[0].startswith(str(tmp_path / "cache" / "lld"))


def test_ziglang_is_installed_into_a_managed_environment_that_needs_it(tmp_path, monkeypatch):
    monkeypatch.setattr(L, "system_lld", lambda: None)
    monkeypatch.delenv("TRITON_HIP_LLD_PATH", raising=False)
    site = _site(tmp_path / "env" / "lib" / "python3.11")
    env = _triton_env(site, path=str(tmp_path / "env"))
    calls = []

    def install_into(folder, requirements, *, progress=None, what=""):
        calls.append((folder, requirements))
        _fake_zig(site)
        return "pip"

    said = []
    assert L.ensure(env, install=False, install_into=install_into) is None and calls == []   # --no-install
    user = _triton_env(site, origin="user")
    assert L.ensure(user, install=True, install_into=install_into) is None and calls == []   # not ours to change
    got = L.ensure(env, install=True, install_into=install_into, progress=said.append)
    assert calls == [(tmp_path / "env", [L.ZIGLANG])] and got == str(tmp_path / "env" / "bin" / "ld.lld")
    assert "installing ziglang==0.17.1 (zig's lld) into its environment" in said[0]
    assert L.ensure(env, install=True, install_into=install_into) == got and len(calls) == 1   # there now


def test_the_hint_is_the_same_in_versions_and_diff(tmp_path, monkeypatch):
    """versions' row and diff's error say what is missing and how to get it, not Triton's raw line (exit 5)."""
    from tritonscope.core.errors import CompileError
    from tritonscope.pipeline import child_compile
    from tritonscope.versions.run import Side, error_line

    managed = _triton_env(_site(tmp_path / "m"), path=str(tmp_path / "m"))
    line = error_line({"message": T34_ERROR}, Side("A", managed))
    assert line == L.hint("3.4.0", managed)
    assert line.startswith("Triton 3.4.0's AMD backend needs ld.lld, which its wheel lacks, and none was found. "
                           "tritonscope installs the ziglang wheel's lld into the environments it makes")
    assert "apt-get install lld-19" in line and "TRITON_HIP_LLD_PATH" in line

    def fails(*a, **k):
        raise CompileError(T34_ERROR)

    monkeypatch.setattr(child_compile, "compile_elsewhere", fails)
    got = runner.invoke(app, ["diff", "matmul", "--arch", "gfx942", "--a", f"triton={sys.executable}",
                              "--b", "BLOCK=32"])
    assert got.exit_code == 5, got.output
    text = " ".join(got.output.split())
    triton = __import__("triton").__version__
    assert f"Triton {triton}'s AMD backend needs ld.lld, which its wheel lacks, and none was found." in text
    assert f"Install the ziglang wheel beside that Triton ({sys.executable} -m pip install ziglang==0.17.1" in text
    assert "apt-get install lld-19" in text


# --------------------------------------------------------------------------
# 3. versions with a capture's kernels, in a Python without torch
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def no_torch_python(tmp_path_factory):
    """A Python with this Triton and nothing else (no torch, no rich), as an environment tritonscope makes."""
    import triton

    root = tmp_path_factory.mktemp("notorch")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / "venv")], check=True)
    site = root / "site"
    site.mkdir()
    package = Path(triton.__file__).parent
    (site / "triton").symlink_to(package)
    for info in package.parent.glob(f"triton-{triton.__version__}*.dist-info"):   # its backends' entry points
        (site / info.name).symlink_to(info)
    (next((root / "venv" / "lib").glob("python3*")) / "site-packages" / "extra.pth").write_text(f"{site}\n")
    python = root / "venv" / "bin" / "python"
    probe = subprocess.run([str(python), "-c", "import triton\ntry:\n import torch\nexcept ImportError: print('no')"],
                           capture_output=True, text=True)
    assert probe.stdout.strip() == "no", probe.stderr
    return str(python)


@pytest.fixture(scope="module")
def capture_report(no_torch_python, tmp_path_factory):
    # side B is this Python, which must import the captured module (it needs torch) to be the contrast
    pytest.importorskip("torch", reason="side B (this Python) imports the captured module, which needs torch")
    from tritonscope import versions as V
    from tritonscope.versions.targets import jobs_for
    from tritonscope.inputs.kernels import Request

    jobs, _notes = jobs_for([str(CAPTURE)], ["sm_90a"], Request(target=""), "sm_90a")
    job = next(j for j in jobs if j.key.startswith("add_kernel [01c9a1bcb1eb]"))
    a = V.Side("A", E.user_env(no_torch_python))
    record = tmp_path_factory.mktemp("record") / "rec"
    return V.compare_versions([job], a, V.Side("B", None), workers=2, record=record), record


def test_a_captured_kernel_compiles_from_its_ttir_where_its_module_does_not_import(capture_report):
    rep, _ = capture_report
    (row,) = rep.rows
    assert row.a is not None and row.b is not None, (row.a_error, row.b_error)
    assert row.status != "fails in A" and row.a.registers and row.a.triton == row.b.triton
    (note,) = row.notes
    assert note.startswith("A (triton ") and "compiled from the capture's recorded pre-pass TTIR (.source), not its " \
        "Python function: the captured module does not import in this environment (ModuleNotFoundError: No module " \
        "named 'torch')" in note
    assert rep.notes == [f"add_kernel [01c9a1bcb1eb] (sm_90a): {note}"]
    assert rep.to_dict()["rows"][0]["notes"] == [note]


def test_the_ttir_note_survives_a_record_and_its_replay(capture_report):
    from tritonscope import versions as V

    rep, record = capture_report
    again = V.from_record(record)
    assert again.notes == rep.notes and again.rows[0].notes == rep.rows[0].notes


def test_an_environment_that_is_most_of_the_cap_is_said(cache, monkeypatch):
    def create(version, *, progress=None, pip_args=()):   # a pip-made environment: its files its own
        folder = _env(cache, version, 2, used_ago=0)
        (folder / "bin").mkdir()
        (folder / "bin" / "python").symlink_to(sys.executable)
        (folder / "tritonscope-env.json").write_text(json.dumps(
            {"requested": version, "triton": version, "triton_dir": os.path.dirname(__import__("triton").__file__)}))
        return E.cached_env(version)

    monkeypatch.setattr(E, "create_env", create)
    monkeypatch.setenv("TRITONSCOPE_CACHE_MAX_MB", "3")
    said = []
    env = E.resolve("3.4.0", progress=said.append)
    try:
        assert said[-1].startswith("Triton 3.4.0: this environment holds 2 MiB, more than half of tritonscope's cache "
                                   "cap of 3 MiB (TRITONSCOPE_CACHE_MAX_MB)")
        assert Path(env.path).exists()   # in use by this process: the prune it set off kept it
    finally:
        os.close(C._held.pop(os.path.abspath(env.path)))


def test_a_versions_row_gives_the_hint_over_the_failure_reports_line(tmp_path):
    """The worker's row line (a failure report's 'pass X on op: error') does not hide what to install."""
    from tritonscope import versions as V

    managed = _triton_env(_site(tmp_path / "m"), path=str(tmp_path / "m"))
    raw = {"type": "CompileError", "message": T34_ERROR,
           "line": "pass ... on tt.func at k.py:1: Exception: ROCm linker /opt/rocm/llvm/bin/ld.lld not found."}
    results = {(0, 0): {"error": raw}, (1, 0): {"error": {"type": "CompileError", "message": "other", "line": "x"}}}
    rep = V.build_report([V.Job("matmul", "gfx942", {})], ["triton 3.4.0", "triton 3.6.0"], results,
                         sides=[V.Side("A", managed), V.Side("B", managed)])
    (row,) = rep.rows
    assert row.a_error["line"] == L.hint("3.4.0", managed) and row.b_error["line"] == "x"


def test_the_listing_says_what_an_environment_counts_and_whether_it_is_in_use(cache):
    folder = _env(cache, "3.4.0", 1, used_ago=10)
    (row,) = E.list_envs()
    assert row["counted"] == C.env_freed_bytes(folder) >= MiB and row["in_use"] is False
    assert C.use_env(folder)
    try:
        assert E.list_envs()[0]["in_use"] is True
    finally:
        os.close(C._held.pop(os.path.abspath(folder)))

"""tritonscope versions: what another Triton does to a set of kernels, GPU-less (a regression report)."""

from __future__ import annotations

import os
from typing import List, Optional

import typer

from tritonscope.commands import checks
from tritonscope.commands.options import CONFIG, DISPLAY, ConfigOpt, Group, Values, composed
from tritonscope.core.errors import RegressionError, UsageError

# versions' own options, in --help order, in the groups its steps read (the kernel's -c/-w/-s/--config and
# --width/--color are the other commands' groups)
TargetsArg = typer.Argument(None, metavar="TARGET...",
                            help="Samples (or `samples` for all), file.py:kernel, package.module:kernel, a capture, "
                                 "a Triton cache, a dump folder or a folder of kernel files.")
# the two Tritons compared, and what each compiles with
SIDES = Group([
    ("a", Optional[str], typer.Option(None, "--a", metavar="VERSION|PYTHON",
                                      help="Side A's Triton: a version (made with pip and cached on first use), or "
                                           "the Python of an environment with Triton. Default: this one.")),
    ("b", Optional[str], typer.Option(None, "--b", metavar="VERSION|PYTHON", help="Side B's Triton (as --a).")),
    ("a_env", Optional[List[str]], typer.Option(None, "--a-env", metavar="NAME=VALUE",
                                                help="An environment variable for side A's compiles (repeatable), "
                                                     "e.g. AMDGCN_USE_BUFFER_OPS=0.")),
    ("b_env", Optional[List[str]], typer.Option(None, "--b-env", metavar="NAME=VALUE",
                                                help="An environment variable for side B's compiles (repeatable).")),
])
ArchesOpt = typer.Option(None, "--arch", metavar="ARCH[,ARCH]",
                         help="Targets to compile for (repeatable or comma-separated). "
                              "Default: sm_90a (found kernels: their own).")
# how the comparison runs and what fails it
RUN = Group([
    ("fail_on", Optional[List[str]], typer.Option(None, "--fail-on", metavar="RULE",
                                                  help="Exit 10 when a kernel breaks the rule (repeatable): "
                                                       "registers>+10%, spills>0, predicted>+5%, drains>+0, "
                                                       "occupancy<-10%... A kernel A compiles and B does not, "
                                                       "or that fails in both, always breaks.")),
    ("jobs", Optional[int], typer.Option(None, "--jobs", "-j", min=1,
                                         help="Compiles at once, both versions together (default: the CPU count).")),
    ("timeout", float, typer.Option(600, "--timeout", min=1, help="Seconds per kernel before its compile is stopped.")),
])
# where the report goes (and where a recorded one comes from)
FILES = Group([
    ("as_json", bool, typer.Option(False, "--json", help="Print the report as JSON.")),
    ("junit", Optional[str], typer.Option(None, "--junit", metavar="FILE", help="Write a JUnit XML file (for CI).")),
    ("save", Optional[str], typer.Option(None, "--save", help="Save the report: .html, .md, .json or .txt.")),
    ("force", bool, typer.Option(False, "--force", help="Overwrite existing --save/--junit files and the record in "
                                                        "a --record folder.")),
    ("record", Optional[str], typer.Option(None, "--record", metavar="DIR",
                                           help="Keep every compile (all stages) in DIR, to replay the report later.")),
    ("replay", Optional[str], typer.Option(None, "--replay", metavar="DIR",
                                           help="Rebuild the report from a --record folder (no Triton, no compile).")),
    ("details", int, typer.Option(20, "--details", help="Kernels whose changes are listed under the table.")),
])
# the cached Triton environments
ENVIRONMENTS = Group([
    ("envs", bool, typer.Option(False, "--envs", help="List the cached Triton environments and exit.")),
    ("add", Optional[str], typer.Option(None, "--add", metavar="VERSION", help="Make the environment for a "
                                                                               "Triton version now, and exit.")),
    ("remove", Optional[str], typer.Option(None, "--remove", metavar="VERSION|all",
                                           help="Remove a cached Triton environment (all: every one), and exit.")),
    ("no_install", bool, typer.Option(False, "--no-install", help="Never run pip: a version without an environment "
                                                                  "is an error.")),
])


def _knobs(items: Optional[List[str]], flag: str) -> dict[str, str]:
    out = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep or not name.strip().isidentifier() or name.strip().upper() != name.strip():
            raise UsageError(f"{flag} {item!r}: expected an environment variable as NAME=VALUE.",
                             hint=f"For example: {flag} AMDGCN_USE_BUFFER_OPS=0")
        out[name.strip()] = value.strip()
    return out


@composed
def versions_cmd(
    ctx: typer.Context,
    targets: Optional[List[str]] = TargetsArg,
    sides: Values = SIDES,
    arch: Optional[List[str]] = ArchesOpt,
    kernel: Values = CONFIG.only("constexpr", "arg", "num_warps", "num_stages"),
    config: Optional[str] = ConfigOpt,
    run: Values = RUN,
    files: Values = FILES,
    environments: Values = ENVIRONMENTS,
    display: Values = DISPLAY.without("pager"),
):
    """Compile kernels under two Tritons and report what changed for speed, worst first.

    Each kernel is compiled by A and by B (a Triton version, made into a
    cached environment with pip on first use, or the Python of your own
    environment) for each --arch, GPU-less, in parallel.  Per kernel: registers
    (VGPR/AGPR/SGPR), spills, shared memory/LDS, occupancy, the main loop's
    memory waits and drains, buffer vs global loads, tensor-core instructions,
    load widths, layouts and conversions, new or lost remarks, and the
    predicted time ratio (or why there is none).  A kernel that compiles in
    one version and not the other is a row with both errors.

    Exit status: 0, 10 when a --fail-on rule breaks (a regression), 2 bad
    usage, 3 unknown target or environment, 8 cannot write.

    Examples:

      tritonscope versions matmul softmax --a 3.6.0 --b 3.9.0 --arch sm_90a,gfx942

      tritonscope versions vllm.model_executor.layers.fused_moe.fused_moe:fused_moe_kernel_gptq_awq
          --a 3.4.0 --b 3.6.0 --arch gfx950 -c ...

      tritonscope versions ./capture --a 3.6.0 --fail-on 'registers>+10%' --fail-on 'spills>0' --junit v.xml

      tritonscope versions matmul --a 3.6.0 --b 3.6.0 --b-env AMDGCN_USE_BUFFER_OPS=0 --arch gfx950

      tritonscope versions --envs          tritonscope versions --remove 3.4.0
    """
    from tritonscope.versions.compare import parse_rule

    env = display.env(ctx)
    err = env.console(stderr=True)
    if environments.envs or environments.add or environments.remove:
        return _manage_environments(env, err, environments, targets)
    if config == "predicted":
        from tritonscope.core.errors import UsageError

        raise UsageError("versions compiles one config per side: --config predicted is compile's.",
                         hint="Give --config N, or pick it first with `tritonscope compile ... --config predicted`.")
    rules = [parse_rule(r) for r in run.fail_on or []]
    checks.check_timeout(run.timeout)
    _check_files(files)
    if files.replay:
        rep = _replay(files.replay, targets, sides, rules)
    else:
        rep = _compare(err, targets, sides, arch, kernel, config, run, files, environments, rules)
    _write(env, rep, files)
    if rules and rep.regressions:
        raise RegressionError(f"{rep.regressions} kernel(s) regressed from {rep.a} to {rep.b} "
                               f"(--fail-on {', '.join(rep.rules)}).", hint="The report above says what changed.")


def _manage_environments(env, err, environments: Values, targets) -> None:
    """--envs / --add / --remove: list, make or remove cached Triton environments (no report)."""
    from tritonscope.versions import envs as E

    if targets:
        raise UsageError("--envs/--add/--remove manage environments: give no TARGET with them.")
    if environments.remove:
        typer.echo(E.remove_env(environments.remove))
    if environments.add:
        e = E.resolve(environments.add, progress=_say(err), remake=True, install=not environments.no_install)
        typer.echo(f"triton {e.triton}: {e.python}")
    if environments.envs:
        _print_envs(env.console(), E.list_envs())


def _check_files(files: Values) -> None:
    """--save's format, both files' paths and the --record folder, checked before any work (exit 8)."""
    from tritonscope.core.output import check_folder, check_path
    from tritonscope.outputs import save

    if files.save:
        save.check(files.save, force=files.force, names=save.VERSIONS, what="report")
    if files.junit:
        check_path(files.junit, force=files.force)
    if files.record:
        if files.replay:
            raise UsageError("--record keeps a run's compiles and --replay rebuilds a report from a record: "
                             "give one of them.")
        check_folder(files.record, force=files.force, holds="manifest.json", what="record")


def _replay(folder: str, targets, sides: Values, rules: list):
    """--replay: the report rebuilt from a --record folder."""
    from tritonscope import versions as V

    if targets or sides.a or sides.b:
        raise UsageError("--replay rebuilds a recorded report: give no TARGET, --a or --b with it.")
    return V.from_record(folder, rules=rules)


def _compare(err, targets, sides: Values, arch, kernel: Values, config, run: Values, files: Values,
             environments: Values, rules: list):
    """Every target compiled by side A and side B for each --arch, in parallel (a status line meanwhile)."""
    from tritonscope import versions as V
    from tritonscope.versions import envs as E

    job_list, notes, (knobs_a, knobs_b) = _jobs(targets, sides, arch, kernel, config)
    install = not environments.no_install
    pair = [V.Side("A", E.resolve(sides.a, install=install, progress=_say(err)) if sides.a else None, knobs_a),
            V.Side("B", E.resolve(sides.b, install=install, progress=_say(err)) if sides.b else None, knobs_b)]
    status = err.status("compiling...") if err.is_terminal and not files.as_json else None
    if status is not None:
        status.start()
    try:
        rep = V.compare_versions(job_list, pair[0], pair[1], workers=run.jobs or os.cpu_count() or 2,
                                 timeout=run.timeout, rules=rules, record=files.record,
                                 progress=(lambda s: status.update(s)) if status is not None else None)
    finally:
        if status is not None:
            status.stop()
    rep.notes += notes
    return rep


def _jobs(targets, sides: Values, arch, kernel: Values, config):
    """The compile jobs, the notes on what was left out and both sides' environment variables: every word
    checked (exit 2; 3 for an unknown arch) before any environment is made."""
    from tritonscope.core.model import DEFAULT_ARCH
    from tritonscope.inputs.kernels import canonical_arch
    from tritonscope.versions.targets import jobs_for

    if not targets:
        raise UsageError("Name what to compile: a sample, file.py:kernel, a capture or cache, or a folder.",
                         hint="tritonscope versions matmul --a 3.6.0 --b 3.9.0")
    if not sides.a and not sides.b:
        raise UsageError("Name at least one other Triton: --a VERSION and/or --b VERSION (or a Python path).",
                         hint="tritonscope versions matmul --a 3.6.0 (B is then this environment's Triton)")
    knobs = _knobs(sides.a_env, "--a-env"), _knobs(sides.b_env, "--b-env")
    arches = [x.strip() for item in arch or [] for x in item.split(",") if x.strip()]
    for x in arches:
        canonical_arch(x)  # an unknown arch: exit 3 before any environment is made
    base = kernel.request("_", config=config)
    job_list, notes = jobs_for(list(targets), arches, base, DEFAULT_ARCH)
    if not job_list:
        raise UsageError("Nothing to compile.")
    return job_list, notes, knobs


def _write(env, rep, files: Values) -> None:
    """The report on the terminal (or as JSON), then --save and --junit, each written whole."""
    from tritonscope.core.output import write_atomic
    from tritonscope.outputs import save
    from tritonscope.versions.report import dumps, junit, print_report, render

    if files.as_json:
        typer.echo(dumps(rep), nl=False)
    else:
        print_report(env.console(), rep, details=files.details)
    if files.save:
        save.write(files.save, lambda fmt: render(rep, fmt), force=files.force, names=save.VERSIONS, what="report")
    if files.junit:
        write_atomic(files.junit, junit(rep), force=files.force)


def _say(console):
    """Progress of an environment being made, one line at a time on stderr."""
    def say(line: str) -> None:
        from rich.markup import escape

        console.print(escape(line), highlight=False)
    return say


def _print_envs(console, rows: list[dict]) -> None:
    from rich.table import Table

    from tritonscope.versions.envs import env_root

    if not rows:
        console.print(f"No Triton environment is cached (in {env_root()}).")
        return
    t = Table(title=f"Triton environments in {env_root()}", title_justify="left")
    for col in ("version", "state", "python", "on disk", "in the cache cap", "made by", "created"):
        t.add_column(col)
    for r in rows:
        state = f"{r['state']}: {r['why']}" if r.get("why") else r["state"]
        if r.get("in_use"):
            state += " (in use)"
        counted = r.get("counted")
        t.add_row(r["version"], state, r["python"] or "", _mib(r["size"]),
                  "" if counted is None else _mib(counted), r.get("installer") or "", r["created"] or "")
    console.print(t)
    console.print("An environment made with uv shares uv's cache through hard links: it counts only what "
                  "removing it frees (TRITONSCOPE_CACHE_MAX_MB caps the cache, environments included).")


def _mib(n: int) -> str:
    return f"{n / 2**20:,.1f} MiB" if n < 10 * 2**20 else f"{n / 2**20:,.0f} MiB"

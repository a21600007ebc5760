"""What every verdict family shares: lines, evidence, fixes checked by compiling."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tritonscope.analyses.explain.inputs import Inputs
from tritonscope.analyses.explain.model import FixNotCheckable, Recompile
from tritonscope.analyses.explain.ttgir import Op

# ==========================================================================
# The verdicts
# ==========================================================================


@dataclass
class _Ctx:
    analysis: Any
    ops: list[Op]
    ttgir: str
    aliases: dict[str, str]
    recompile: Recompile | None
    python: dict[int, str]
    compiles: int = 0
    cache: dict = field(default_factory=dict)
    inputs: Inputs | None = None
    refused: list[str] = field(default_factory=list)   # why changes asked for by the current verdict were not compiled

    @property
    def spec(self):
        return self.analysis.artifact.spec

    @property
    def summary(self):
        return self.analysis.summary

    @property
    def stages_known(self) -> bool:
        """Whether the config's num_stages is known: compiled here, or in the found kernel's metadata.
        (A stage file or a dump without one gets Triton's default in its spec: a guess, never quoted.)"""
        return self.inputs is None or "num_stages" in (self.analysis.artifact.metadata or {})

    def staged(self, buffers: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The buffers the pipeliner keeps one copy of per stage (num_stages or num_stages - 1 copies; any
        copies > 1 when num_stages is not known)."""
        n = self.spec.num_stages
        return [b for b in buffers if b["copies"] > 1 and (not self.stages_known or b["copies"] in (n, n - 1))]

    def compile(self, change: dict):
        """The Analysis of the config with `change` applied, or None (cached; counted).

        None also when the recompile cannot compile such a change here
        (FixNotCheckable): its reason goes into `refused`, for the verdict's fix.
        """
        if self.recompile is None:
            return None
        key = repr(sorted(change.items(), key=str))
        if key not in self.cache:
            try:
                self.compiles += 1
                self.cache[key] = self.recompile(change)
            except FixNotCheckable as e:
                self.compiles -= 1
                self.cache[key] = e
            except Exception:  # a candidate Triton rejects is simply not a fix
                self.cache[key] = None
        got = self.cache[key]
        if isinstance(got, FixNotCheckable):
            self.refused.append(got.reason)
            return None
        return got

    def refuses(self, change: dict) -> bool:
        """Whether the recompile says up front that it cannot compile such a change (its reason then goes
        into `refused`): for a fix with nothing to compile from here, e.g. an argument a found kernel has
        only as a type."""
        ask = getattr(self.recompile, "refuses", None)
        reason = ask(change) if callable(ask) else None
        if reason:
            self.refused.append(reason)
        return bool(reason)


def _ev(op: Op, stage: str = "ttgir") -> tuple[str, int, str]:
    return (stage, op.number, op.text.strip())


def _py_ev(ctx: _Ctx, line: int | None) -> list[tuple[str, int, str]]:
    if line is None or line not in ctx.python:
        return []
    return [("python", line, ctx.python[line].strip())]


def _lines(*groups) -> tuple[int, ...]:
    out: list[int] = []
    for g in groups:
        for x in (g if isinstance(g, (list, tuple, set)) else [g]):
            if isinstance(x, int) and x not in out:
                out.append(x)
    return tuple(out)


def _kib(n: int | None) -> str:
    return "?" if n is None else f"{n:,} B"

"""Display filters: the lines of a stage a view folds away as noise, and the one line that says so.

What counts as noise is each dialect's own knowledge (`Dialect.noise(raw)`
in tritonscope/language/dialects: DWARF debug sections, assembler directives,
comments, ELF header lines); this module only applies it, the same way for
every view (terminal stages view, side by side, HTML, Markdown, .txt).

Folding never renumbers: a shown line keeps its number in the real stage
text, so `--line`, notes and the HTML links still point at real lines.
Stage texts themselves (the Artifact, saved .json reports, diffs)
are never filtered.  `--raw` shows everything; `--keep KINDS` keeps some.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable

# Every kind a dialect's noise() may return, in the order messages list them.
KINDS = ("debug", "header", "directive", "comment")
# What the views fold unless told otherwise: every kind (a dialect marks a
# line as noise only where it is noise).
DEFAULT_HIDE: frozenset[str] = frozenset(KINDS)
RAW: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Folded:
    """One stage after folding: the lines to show, and what was folded away."""

    shown: tuple               # Line records, numbers unchanged
    kinds: dict[int, str]      # line number -> noise kind, for every noise line (shown or not)
    hidden: dict[str, int] = field(default_factory=dict)  # kind -> lines folded away

    @property
    def hidden_total(self) -> int:
        return sum(self.hidden.values())


def hide_set(raw: bool = False, keep: str | Iterable[str] | None = None) -> frozenset[str]:
    """The kinds to fold: everything by default, nothing with raw, all but `keep` ("debug,comment")."""
    from tritonscope.core.errors import UsageError, close_matches

    if raw:
        return RAW
    if keep is None:
        return DEFAULT_HIDE
    words = keep.split(",") if isinstance(keep, str) else list(keep)
    if not any(w.strip() for w in words):  # --keep '' was taken as no --keep, unsaid
        raise UsageError(f"--keep {keep!r} names no kind of noise." if isinstance(keep, str) else
                         "--keep names no kind of noise.",
                         hint=f"Kinds: {', '.join(KINDS)} (comma-separated), or all; --raw shows everything.")
    kept = set()
    for word in (w.strip().lower() for w in words if w.strip()):
        word = {"directives": "directive", "comments": "comment", "headers": "header"}.get(word, word)
        if word == "all":
            return RAW
        if word not in KINDS:
            raise UsageError(f"Unknown kind of noise {word!r}.{close_matches(word, KINDS)}",
                             hint=f"Kinds: {', '.join(KINDS)} (comma-separated), or all; --raw shows everything.")
        kept.add(word)
    return DEFAULT_HIDE - kept


def noise_of(key: str) -> Callable[[str], str | None]:
    """The stage dialect's noise(raw_line) classifier (a plain-text stage has none)."""
    from tritonscope.language.dialects import dialect

    return dialect(key).noise


def classify(key: str, lines) -> dict[int, str]:
    """Line number -> noise kind, for the lines of one stage the dialect calls noise."""
    noise = noise_of(key)
    out: dict[int, str] = {}
    for line in lines:
        kind = noise(line.raw)
        if kind in KINDS:  # a kind the views do not know is shown, never folded for good
            out[line.number] = kind
    return out


def view_lines(analysis, key: str, *, raw: bool = False) -> tuple:
    """Every line of a stage as a view shows it, numbered as the compiler wrote it.

    The parsed Line where the parser kept one (its text without location
    noise), else the stage text's own line (a parser may drop lines, e.g.
    PTX `.loc`, which are noise here); with `raw`, every line exactly as
    written.  Falls back to the parsed lines alone when there is no stage text.
    """
    from tritonscope.core.model import Line

    stage = analysis.parsed[key]
    text = analysis.artifact.stages.get(key)
    lines = stage.lines
    if text is None:
        return tuple(Line(ln.number, ln.raw, ln.raw, ln.loc) for ln in lines) if raw else tuple(lines)
    written = text.splitlines()
    complete = len(lines) >= len(written) and all(ln.number == i for i, ln in enumerate(lines, 1))
    if complete and not raw:
        return tuple(lines)
    by_number = {ln.number: ln for ln in lines}
    out = []
    for number in sorted(set(by_number) | set(range(1, len(written) + 1))):
        parsed = by_number.get(number)
        own = written[number - 1] if number <= len(written) else None
        if parsed is None:
            out.append(Line(number, own, own))
        elif raw and own is not None:
            out.append(Line(number, own, own, parsed.loc))
        else:
            out.append(parsed)
    return tuple(out)


def is_raw(hide: frozenset[str] | None) -> bool:
    """Nothing folded (--raw): the views then show each line exactly as written."""
    return hide is not None and not hide


def fold(analysis, key: str, hide: frozenset[str] | None = None) -> Folded:
    """One stage's view lines without the noise lines whose kind is in `hide` (default: all kinds)."""
    hide = DEFAULT_HIDE if hide is None else hide
    lines = view_lines(analysis, key, raw=is_raw(hide))
    kinds = classify(key, lines)
    if not hide or not kinds:
        return Folded(lines, kinds, {})
    hidden: dict[str, int] = {}
    shown = []
    for line in lines:
        kind = kinds.get(line.number)
        if kind in hide:
            hidden[kind] = hidden.get(kind, 0) + 1
        else:
            shown.append(line)
    return Folded(tuple(shown), kinds, {k: hidden[k] for k in ordered_kinds(hidden)})


def ordered_kinds(kinds: Iterable[str]) -> list[str]:
    kinds = list(kinds)
    return [k for k in KINDS if k in kinds] + sorted(k for k in kinds if k not in KINDS)


def describe(hidden: dict[str, int]) -> str:
    """{'debug': 135, 'comment': 4} -> '135 debug lines and 4 comment lines'."""
    parts = [f"{hidden[kind]:,} {kind} line{'s' if hidden[kind] != 1 else ''}" for kind in ordered_kinds(hidden)
             if hidden[kind]]
    if len(parts) > 1:
        return ", ".join(parts[:-1]) + " and " + parts[-1]
    return parts[0] if parts else ""


def message(hidden: dict[str, int], how: str = "--raw shows them") -> str:
    """The one line a view prints for a folded stage: '135 debug lines hidden; --raw shows them'."""
    what = describe(hidden)
    return f"{what} hidden; {how}" if what else ""

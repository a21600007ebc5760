"""Analysis -> one self-contained, offline HTML report.

Everything is inline (CSS, JS, layout SVGs); a Content-Security-Policy lets
the page load nothing and run only its own script (pinned by hash), so even
text that slipped through unescaped could not run.  All text from the kernel
and the compiler (IR is full of '<' and '>') goes through `_e`.

Side-by-side panes, one per stage; every line that comes from a Python line
carries `data-py`, and clicking a line highlights every line from the same
Python line in every pane.  Notes are margin labels, with their explanation
on hover and in the selection bar.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
from typing import Any

from tritonscope.analysis import Analysis
from tritonscope.model import ARCHES, STAGE_BY_KEY, Line, Note


def _e(text: Any) -> str:
    """Escape for HTML text and attribute values (quotes too)."""
    return html.escape(str(text), quote=True)


# --------------------------------------------------------------------------
# Summary rows, shared with the Markdown report
# --------------------------------------------------------------------------


def summary_rows(analysis: Analysis) -> list[tuple[str, str]]:
    """(label, value) pairs: what was compiled, for what, and what it costs."""
    from tritonscope.compile import fit_problems, occupancy  # pure arithmetic; no Triton import

    a = analysis.artifact
    spec = a.spec
    arch = ARCHES.get(spec.arch)
    res = a.resources
    rows = [("kernel", f"{spec.kernel}  ({spec.target})"),
            ("target", f"{spec.arch} ({arch.gpus})" if arch else spec.arch),
            ("config", ", ".join([*(f"{k}={v}" for k, v in spec.constexprs.items()),
                                  f"num_warps={spec.num_warps}", f"num_stages={spec.num_stages}"]))]
    if spec.options:
        rows.append(("options", ", ".join(f"{k}={v}" for k, v in spec.options.items())))
    if spec.shape:
        rows.append(("problem", "x".join(map(str, spec.shape)) + (f"  {spec.dtype}" if spec.dtype else "")
                     + (f"  grid={tuple(spec.grid)}" if spec.grid else "")))
    rows.append(("arguments", ", ".join(
        f"{s.name}: {s.type}" + (f" {{{', '.join(s.attrs)}}}" if s.attrs else "")
        + (f" = {s.value}" if s.type == "constexpr" else "") for s in a.specialization)))
    rows.append(("triton", a.triton_version + (f"  ({', '.join(f'{k}={v}' for k, v in a.env.items())})"
                                               if a.env else "")))
    limit = f" (limit {arch.max_shared_per_block:,})" if arch else ""
    rows.append(("shared memory", f"{res.dynamic_shared:,} bytes dynamic{limit}"))
    rows.append(("registers", "unknown" if res.registers is None else f"{res.registers} per thread"))
    rows.append(("spills", "unknown" if res.local is None
                 else ("none" if not res.local else f"{res.local} bytes local memory per thread")))
    if arch:
        problems = fit_problems(a)
        if problems:
            rows.append(("fits", "NO: " + "; ".join(problems)))
        else:
            occ = occupancy(a)
            rows.append(("occupancy", f"{occ['blocks_per_sm']} blocks/SM, {occ['warps_per_sm']} warps/SM "
                                      f"({occ['occupancy']:.0%}), limited by {occ['limited_by']}"))
    rows.append(("hash", a.kernel_hash[:16]))
    return rows


def mix_table(analysis: Analysis) -> tuple[list[str], list[tuple[str, list[int]]]]:
    """(stage keys, [(class, counts per stage)]) for stages that have a mix."""
    stages = [k for k, counts in analysis.mix.items() if counts]
    classes: list[str] = []
    for k in stages:
        for c in analysis.mix[k]:
            if c not in classes:
                classes.append(c)
    return stages, [(c, [analysis.mix[k].get(c, 0) for k in stages]) for c in classes]


def python_line_of(analysis: Analysis, key: str, line: Line) -> int | None:
    """The kernel-file line a stage line comes from (None when elsewhere or unknown)."""
    if key == "python":
        return line.loc.line if line.loc else analysis.artifact.python_first_line + line.number - 1
    if line.loc and line.loc.file in _kernel_files(analysis):
        return line.loc.line
    return None


def _kernel_files(analysis: Analysis) -> set[str]:
    from tritonscope.report import kernel_files

    cached = getattr(analysis, "_ts_kernel_files", None)
    if cached is None:
        cached = kernel_files(analysis)
        try:
            analysis._ts_kernel_files = cached  # type: ignore[attr-defined]
        except AttributeError:
            pass
    return cached


# --------------------------------------------------------------------------
# The page
# --------------------------------------------------------------------------

_CSS = """
:root{--bg:#fbfbfa;--fg:#1d1f21;--mut:#6a737d;--line:#e4e4e0;--hl:#fff1a8;--hl2:#ffd54a;--note:#1f5fa8;
--cost:#b3261e;--pane:#ffffff}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;background:var(--bg);color:var(--fg)}
header{padding:12px 18px 4px}
h1{font-size:20px;margin:0}
h1 small{font-weight:normal;color:var(--mut)}
h2{font-size:15px;margin:0}
#top{display:flex;flex-wrap:wrap;gap:28px;padding:6px 18px 10px;align-items:flex-start}
#summary{max-width:62em}
.mixes{display:flex;gap:18px;align-items:flex-start}
table{border-collapse:collapse;font-size:13px}
td,th{padding:2px 10px 2px 0;vertical-align:top;text-align:left}
table.kv td:first-child{font-weight:600;white-space:nowrap}
table.mix td,table.mix th{padding:2px 8px;border-bottom:1px solid var(--line)}
table.mix td.c{text-align:right;font-variant-numeric:tabular-nums}
.warn{color:#8a5a00}
.bad{color:var(--cost);font-weight:600}
#layouts{padding:0 18px 10px}
#layouts figure{display:inline-block;margin:0 16px 10px 0;vertical-align:top;background:var(--pane);
border:1px solid var(--line);padding:6px}
#layouts figcaption{font:12px ui-monospace,monospace;color:var(--mut);max-width:60em;overflow-wrap:anywhere}
#toggles{padding:4px 18px;font-size:13px;position:sticky;top:0;background:var(--bg);z-index:2;
border-bottom:1px solid var(--line)}
#toggles label{margin-right:12px;white-space:nowrap}
#toggles .hint{color:var(--mut)}
#panes{display:flex;gap:8px;padding:8px 18px 64px;overflow-x:auto;align-items:stretch}
.pane{flex:1 1 0;min-width:19em;background:var(--pane);border:1px solid var(--line);display:flex;
flex-direction:column}
.pane[hidden]{display:none}
.pane h2{padding:6px 8px;border-bottom:1px solid var(--line);font-weight:600}
.pane h2 small{font-weight:normal;color:var(--mut)}
.code{position:relative;overflow:auto;max-height:78vh;font:12px/1.5 ui-monospace,"SFMono-Regular",Menlo,
Consolas,monospace}
.l{display:flex;min-height:1.5em;border-left:3px solid transparent;cursor:default}
.l[data-py]{cursor:pointer}
.l[data-py]:hover{background:#f3f3ee}
.l.hl{background:var(--hl);border-left-color:var(--hl2)}
.l.sel{background:var(--hl2)}
.n{flex:none;width:3.6em;padding-right:8px;text-align:right;color:var(--mut);user-select:none}
.t{flex:1 1 auto;white-space:pre-wrap;overflow-wrap:anywhere;min-width:0;tab-size:4}
.m{flex:none;max-width:11em;padding:0 6px;text-align:right}
.note{display:inline-block;margin-left:4px;padding:0 5px;border-radius:3px;font:11px/1.5 system-ui,sans-serif;
color:#fff;background:var(--note);white-space:nowrap;max-width:10.5em;overflow:hidden;text-overflow:ellipsis;
vertical-align:top;cursor:help}
.note.k-cost{background:var(--cost)}
.note.k-encoding{background:#6b3fa0}
.note.k-instruction{background:#1b7340}
.note.k-info{background:#5b636b}
#info{position:fixed;left:0;right:0;bottom:0;max-height:34vh;overflow:auto;background:#22272e;color:#e6e6e6;
padding:8px 18px;font-size:13px;z-index:3;box-shadow:0 -2px 8px rgba(0,0,0,.2)}
#info[hidden]{display:none}
#info code{font:12px ui-monospace,monospace;color:#ffe27a}
#info .nl{margin:2px 0 2px 12px}
#info .nl b{color:#9cc9ff}
footer{padding:4px 18px 70px;color:var(--mut);font-size:12px}
"""

# Plain DOM + textContent only: nothing from the page's data is ever parsed as HTML.
_JS = r"""
(function(){
'use strict';
var byPy = new Map();
var lines = document.querySelectorAll('.l[data-py]');
for (var i = 0; i < lines.length; i++) {
  var k = lines[i].getAttribute('data-py');
  var list = byPy.get(k);
  if (!list) { list = []; byPy.set(k, list); }
  list.push(lines[i]);
}
var current = null, lit = [], clicked = null;
var info = document.getElementById('info');
function clear() {
  for (var i = 0; i < lit.length; i++) lit[i].classList.remove('hl', 'sel');
  lit = []; current = null; clicked = null; info.hidden = true;
  while (info.firstChild) info.removeChild(info.firstChild);
}
function paneOf(el) { return el.closest('.pane'); }
function add(parent, tag, text, cls) {
  var el = document.createElement(tag);
  if (text !== undefined) el.textContent = text;
  if (cls) el.className = cls;
  parent.appendChild(el);
  return el;
}
function select(py, el) {
  clear();
  current = py; clicked = el; lit = byPy.get(py) || [];
  var counts = new Map(), firsts = new Map();
  for (var i = 0; i < lit.length; i++) {
    var p = paneOf(lit[i]); var s = p.getAttribute('data-stage');
    lit[i].classList.add('hl');
    counts.set(s, (counts.get(s) || 0) + 1);
    if (!firsts.has(p)) firsts.set(p, lit[i]);
  }
  el.classList.add('sel');
  firsts.forEach(function(first, pane){
    if (pane === paneOf(el)) return;
    var code = pane.querySelector('.code');
    code.scrollTop = Math.max(0, first.offsetTop - 48);
  });
  var head = add(info, 'div');
  add(head, 'b', 'Python line ' + py + ': ');
  var src = document.querySelector('.pane[data-stage="python"] .l[data-py="' + py + '"] .t');
  if (src) add(head, 'code', src.textContent.trim());
  var parts = [];
  counts.forEach(function(n, s){ parts.push(s + ' ' + n + (n === 1 ? ' line' : ' lines')); });
  add(head, 'span', '  \u2192  ' + parts.join(' \u00b7 '));
  var seen = 0;
  for (var j = 0; j < lit.length && seen < 40; j++) {
    var notes = lit[j].querySelectorAll('.note');
    for (var n = 0; n < notes.length && seen < 40; n++, seen++) {
      var row = add(info, 'div', undefined, 'nl');
      add(row, 'b', paneOf(lit[j]).getAttribute('data-stage') + ' ' + notes[n].textContent + ': ');
      add(row, 'span', notes[n].getAttribute('title'));
    }
  }
  info.hidden = false;
}
document.getElementById('panes').addEventListener('click', function(ev){
  var el = ev.target.closest('.l[data-py]');
  if (!el) return;
  var py = el.getAttribute('data-py');
  if (py === current && el === clicked) { clear(); return; }
  select(py, el);
});
document.addEventListener('keydown', function(ev){ if (ev.key === 'Escape') clear(); });
var boxes = document.querySelectorAll('#toggles input[data-stage]');
for (var b = 0; b < boxes.length; b++) {
  boxes[b].addEventListener('change', function(ev){
    var s = ev.target.getAttribute('data-stage');
    document.querySelector('.pane[data-stage="' + s + '"]').hidden = !ev.target.checked;
  });
}
document.body.setAttribute('data-ready', '1');
})();
"""


def _csp(script: str) -> str:
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    return (f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'; "
            "img-src data:; base-uri 'none'; form-action 'none'")


# Panes that start hidden (a checkbox shows them): LLVM IR is long and rarely
# what one reads first; five panes fit a wide screen.
HIDDEN_AT_FIRST = ("llir",)


def render_html(analysis: Analysis) -> str:
    a = analysis.artifact
    spec = a.spec
    out: list[str] = []
    w = out.append
    w("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
    w(f"<meta http-equiv=\"Content-Security-Policy\" content=\"{_e(_csp(_JS))}\">\n")
    w("<meta name=\"referrer\" content=\"no-referrer\">\n")
    w("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
    w(f"<meta name=\"generator\" content=\"tritonscope\">\n<title>{_e(spec.kernel)} · {_e(spec.label())}"
      " · tritonscope</title>\n")
    w(f"<style>{_CSS}</style>\n</head>\n<body>\n")
    w(f"<header><h1>{_e(spec.kernel)} <small>{_e(spec.label())} · Triton {_e(a.triton_version)}</small></h1>"
      "</header>\n")

    w("<div id=\"top\">\n<section id=\"summary\"><table class=\"kv\">\n")
    for label, value in summary_rows(analysis):
        cls = " class=\"bad\"" if label == "fits" else ""
        w(f"<tr><td>{_e(label)}</td><td{cls}>{_e(value)}</td></tr>\n")
    w("</table>\n")
    for warning in a.warnings:
        w(f"<p class=\"warn\">warning: {_e(warning)}</p>\n")
    w("</section>\n")
    mixes = [(k, counts) for k, counts in analysis.mix.items() if counts]
    if mixes:
        w("<section id=\"mix\"><h2>Instruction mix</h2><div class=\"mixes\">")
        for key, counts in mixes:
            w(f"<table class=\"mix\" data-stage=\"{_e(key)}\"><tr><th>{_e(key.upper())}</th><th></th></tr>\n")
            for cls_name, n in counts.items():
                w(f"<tr><td>{_e(cls_name)}</td><td class=\"c\">{_e(n)}</td></tr>\n")
            w("</table>\n")
        w("</div></section>\n")
    w("</div>\n")

    layouts = _layout_figures(analysis)
    if layouts:
        w("<section id=\"layouts\"><h2>Layouts</h2>\n" + "".join(layouts) + "</section>\n")

    keys = [k for k in analysis.parsed]
    shown = [k for k in keys if k not in HIDDEN_AT_FIRST] or keys
    w("<nav id=\"toggles\"><span>stages: </span>")
    for key in keys:
        checked = " checked" if key in shown else ""
        w(f"<label><input type=\"checkbox\" data-stage=\"{_e(key)}\"{checked}> {_e(key)}</label>")
    w("<span class=\"hint\">click a line to highlight what the same Python line became in every stage"
      " (Esc clears); hover a note for its explanation</span></nav>\n")
    w("<main id=\"panes\">\n")
    for key in keys:
        _pane(analysis, key, w, hidden=key not in shown)
    w("</main>\n<div id=\"info\" hidden></div>\n")
    w(f"<footer>tritonscope report · {_e(spec.kernel)} · kernel hash {_e(a.kernel_hash)}</footer>\n")
    w(f"<script>{_JS}</script>\n</body>\n</html>\n")
    return "".join(out)


def _pane(analysis: Analysis, key: str, w, hidden: bool = False) -> None:
    info = STAGE_BY_KEY.get(key)
    title = info.title if info else key
    stage = analysis.parsed[key]
    notes = analysis.notes_for(key)
    w(f"<section class=\"pane\" data-stage=\"{_e(key)}\"{' hidden' if hidden else ''}><h2>{_e(title)} <small>{len(stage.lines)} lines"
      f"{f', {sum(map(len, notes.values()))} notes' if notes else ''}</small></h2><div class=\"code\">\n")
    for line in stage.lines:
        py = python_line_of(analysis, key, line)
        number = py if key == "python" and py is not None else line.number
        attrs = f" data-py=\"{py}\"" if py is not None else ""
        line_notes = notes.get(line.number, ())
        if line_notes:
            attrs += f" title=\"{_e(_note_tooltip(line_notes))}\""
        w(f"<div class=\"l\"{attrs}><span class=\"n\">{number}</span><span class=\"t\">{_e(line.text)}</span>")
        if line_notes:
            w("<span class=\"m\">" + "".join(_note(n) for n in line_notes) + "</span>")
        w("</div>\n")
    w("</div></section>\n")


def _note_tooltip(notes) -> str:
    return "\n".join(f"{n.label}: {n.explanation}" for n in notes)


def _note(note: Note) -> str:
    tip = note.explanation + (f"\n(see {note.reference})" if note.reference else "")
    kind = re.sub(r"[^a-z0-9-]", "", note.kind.lower())
    return f"<span class=\"note k-{kind}\" title=\"{_e(tip)}\">{_e(note.label)}</span>"


# SVG from our own layout drawer is inlined; anything that could load or run
# something is refused rather than trusted.
_UNSAFE_SVG = re.compile(r"<\s*(?:script|foreignObject|iframe|image|use)\b|\son\w+\s*=|javascript:|"
                         r"(?:xlink:)?href\s*=\s*[\"'](?!#)|url\(\s*[\"']?(?!#)", re.I)


def _layout_figures(analysis: Analysis) -> list[str]:
    if not analysis.layouts:
        return []
    try:
        from tritonscope.render.layout_view import layout_svg
    except ImportError:
        return ["<p class=\"warn\">Layout drawings are not available in this tritonscope.</p>"]
    figures = []
    for layout in analysis.layouts:
        name = _layout_name(layout)
        try:
            svg = layout_svg(layout)
        except Exception as e:  # an unknown layout is shown without a drawing, never breaks the report
            figures.append(f"<figure><figcaption>{_e(name)}</figcaption>"
                           f"<p class=\"warn\">no drawing: {_e(type(e).__name__)}: {_e(e)}</p></figure>")
            continue
        if not isinstance(svg, str) or not svg.lstrip().startswith(("<svg", "<?xml")) or _UNSAFE_SVG.search(svg):
            figures.append(f"<figure><figcaption>{_e(name)}</figcaption>"
                           "<p class=\"warn\">no drawing (the drawing was not plain SVG)</p></figure>")
            continue
        svg = re.sub(r"^\s*<\?xml[^>]*\?>\s*", "", svg)
        figures.append(f"<figure class=\"layout\"><figcaption>{_e(name)}</figcaption>{svg}</figure>\n")
    return figures


def _layout_name(layout: Any) -> str:
    for attr in ("name", "alias", "title", "encoding", "text"):
        value = layout.get(attr) if isinstance(layout, dict) else getattr(layout, attr, None)
        if isinstance(value, str) and value:
            return value
    return type(layout).__name__


# --------------------------------------------------------------------------
# Config diffs, side by side
# --------------------------------------------------------------------------

_DIFF_CSS = """
*{box-sizing:border-box}
body{margin:0;padding:12px 18px 40px;font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;background:#fbfbfa;
color:#1d1f21}
h1{font-size:20px;margin:0 0 8px}
h1 small{font-weight:normal;color:#6a737d}
h2{font-size:15px;margin:18px 0 6px}
table{border-collapse:collapse;font-size:13px}
.sum td,.sum th{padding:2px 12px 2px 0;text-align:left;vertical-align:top}
.sum tr.changed td{background:#fff4c2}
.sum td.delta{color:#6a737d}
ul.story li{margin:2px 0}
table.sbs{width:100%;table-layout:fixed;font:12px/1.5 ui-monospace,"SFMono-Regular",Menlo,Consolas,monospace;
background:#fff;border:1px solid #e4e4e0}
table.sbs col.n{width:3.6em}
table.sbs td{padding:0 6px;vertical-align:top;white-space:pre-wrap;overflow-wrap:anywhere;tab-size:4}
table.sbs td.n{color:#6a737d;text-align:right;user-select:none}
table.sbs th{text-align:left;padding:4px 6px;border-bottom:1px solid #e4e4e0;font:600 13px system-ui,sans-serif}
td.del{background:#ffe3e3}
td.add{background:#dcf5e0}
td.empty{background:#f3f3f0}
tr.hunk td{background:#eef4fb;color:#1f5fa8}
.note{display:inline-block;margin-left:6px;padding:0 5px;border-radius:3px;font:11px/1.5 system-ui,sans-serif;
color:#fff;background:#1f5fa8;white-space:nowrap}
p.same{color:#6a737d;margin:2px 0}
"""


def render_html_diff(diff: Any) -> str:
    """A config diff (a diff.ConfigDiff or its to_dict()) as one offline HTML page, stages side by side.

    Unified hunks become split rows: context on both sides, a removed run
    next to the added run that replaced it.  No script; the page loads nothing.
    """
    d = diff.to_dict() if hasattr(diff, "to_dict") else diff
    out: list[str] = []
    w = out.append
    w("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
    w("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
      "base-uri 'none'; form-action 'none'\">\n<meta name=\"referrer\" content=\"no-referrer\">\n")
    w(f"<title>{_e(d.get('kernel', ''))}: {_e(d.get('a', 'A'))} vs {_e(d.get('b', 'B'))} · tritonscope diff</title>\n")
    w(f"<style>{_DIFF_CSS}</style>\n</head>\n<body>\n")
    w(f"<h1>{_e(d.get('kernel', ''))} <small>A: {_e(d.get('a', ''))} · B: {_e(d.get('b', ''))}</small></h1>\n")
    if d.get("config_changes"):
        w("<p>" + _e("; ".join(map(str, d["config_changes"]))) + "</p>\n")
    if d.get("story"):
        w("<h2>What changed</h2><ul class=\"story\">" + "".join(f"<li>{_e(s)}</li>" for s in d["story"]) + "</ul>\n")
    if d.get("summary"):
        w("<h2>Summary</h2><table class=\"sum\"><tr><th></th><th>A</th><th>B</th><th></th></tr>\n")
        for r in d["summary"]:
            cls = " class=\"changed\"" if r.get("changed") else ""
            w(f"<tr{cls}><td>{_e(r.get('name', ''))}</td><td>{_e(r.get('a', ''))}</td><td>{_e(r.get('b', ''))}</td>"
              f"<td class=\"delta\">{_e(r.get('delta', ''))}</td></tr>\n")
        w("</table>\n")
    if d.get("roles"):
        w("<h2>Encodings by role</h2><table class=\"sum\"><tr><th></th><th>A</th><th>B</th></tr>\n")
        for r in d["roles"]:
            cls = " class=\"changed\"" if r.get("changed") else ""
            w(f"<tr{cls}><td>{_e(r.get('role', ''))}</td><td>{_e(r.get('a') or '-')}</td>"
              f"<td>{_e(r.get('b') or '-')}</td></tr>\n")
        w("</table>\n")
    for s in d.get("stages", []):
        key = s.get("stage", "")
        info = STAGE_BY_KEY.get(key)
        title = info.title if info else key
        if s.get("missing"):
            w(f"<h2>{_e(title)}</h2><p class=\"same\">only in {'B' if s['missing'] == 'A' else 'A'}</p>\n")
            continue
        if s.get("identical"):
            w(f"<h2>{_e(title)}</h2><p class=\"same\">identical ({_e(s.get('a_lines', '?'))} lines, "
              "after removing locations and renumbering)</p>\n")
            continue
        w(f"<h2 data-stage=\"{_e(key)}\">{_e(title)} <small>-{_e(s.get('removed', 0))} +{_e(s.get('added', 0))}"
          "</small></h2>\n<table class=\"sbs\"><colgroup><col class=\"n\"><col><col class=\"n\"><col></colgroup>"
          f"<tr><th></th><th>A: {_e(d.get('a', ''))}</th><th></th><th>B: {_e(d.get('b', ''))}</th></tr>\n")
        for row in _split_rows(s.get("diff", [])):
            w(row)
        w("</table>\n")
    w("</body>\n</html>\n")
    return "".join(out)


def _split_rows(lines) -> list[str]:
    rows: list[str] = []
    minus: list = []
    plus: list = []

    def cell(item, cls: str, side: int) -> str:
        if item is None:
            return "<td class=\"n empty\"></td><td class=\"empty\"></td>"
        tag, text, a_line, b_line, notes = (list(item) + [None] * 5)[:5]
        number = a_line if side == 0 else b_line
        badges = "".join(f"<span class=\"note\">{_e(n)}</span>" for n in (notes or ()))
        c = f" class=\"{cls}\"" if cls else ""
        return f"<td class=\"n\">{'' if number is None else _e(number)}</td><td{c}>{_e(text)}{badges}</td>"

    def flush():
        for i in range(max(len(minus), len(plus))):
            left = minus[i] if i < len(minus) else None
            right = plus[i] if i < len(plus) else None
            rows.append("<tr>" + cell(left, "del", 0) + cell(right, "add", 1) + "</tr>\n")
        minus.clear()
        plus.clear()

    for item in lines:
        tag = item[0]
        if tag == "-":
            if plus:
                flush()
            minus.append(item)
        elif tag == "+":
            plus.append(item)
        else:
            flush()
            if tag == "@":
                rows.append(f"<tr class=\"hunk\"><td colspan=\"4\">{_e(item[1])}</td></tr>\n")
            else:
                rows.append("<tr>" + cell(item, "", 0) + cell(item, "", 1) + "</tr>\n")
    flush()
    return rows

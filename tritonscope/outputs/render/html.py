"""Analysis -> one self-contained, offline HTML report.

Everything is inline (CSS, JS, layout SVGs); a Content-Security-Policy lets
the page load nothing and run only its own script (pinned by hash), so even
text that slipped through unescaped could not run.  All text from the kernel
and the compiler (IR is full of '<' and '>') goes through `_e`.

Side-by-side panes, one per stage; every line that comes from a Python line
carries `data-py`, and clicking a line highlights every line from the same
Python line in every pane.  Notes are margin labels, with their explanation
on hover and in the selection bar.

Reading comfort (issue 16): lines never wrap by default (a pane scrolls
sideways, its line numbers and notes sticky); a bar of checkboxes shows or
hides panes, wraps lines, squeezes PTX/SASS column padding, and unfolds each
kind of noise (render/noise.py: every line is in the page, noise lines carry
class `z z-KIND` and stay hidden until their kind is ticked, so numbers and
links are those of the real stage); each pane has narrower / wider / focus.
All of it is CSS classes toggled by the one script: no inline handlers.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
from typing import Any

from tritonscope.analyses.analysis import Analysis
from tritonscope.language.dialects import dialect
from tritonscope.core.model import Line, Note
from tritonscope.outputs.render.summary_text import BAD_LABELS


def _e(text: Any) -> str:
    """Escape for HTML text and attribute values (quotes too)."""
    return html.escape(str(text), quote=True)


# --------------------------------------------------------------------------
# The instruction mix table, shared with the Markdown report
# (the summary rows are render/summary_text.py's, shared by all three reports)
# --------------------------------------------------------------------------


def python_line_of(analysis: Analysis, key: str, line: Line, kernel_files: frozenset[str] | None = None) -> int | None:
    """The kernel-file line a stage line comes from (None when elsewhere or unknown).

    `kernel_files`: paths.kernel_files(analysis), which a page looks up once (sections.Page); None: looked up here.
    """
    from tritonscope.outputs.sections import python_line_of as line_of

    if kernel_files is None:
        from tritonscope.pipeline.paths import kernel_files as files_of

        kernel_files = frozenset(files_of(analysis))
    return line_of(analysis, key, line, kernel_files)


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
#toggles{display:flex;flex-wrap:wrap;align-items:center;gap:2px 12px;padding:4px 18px;font-size:13px;
position:sticky;top:0;background:var(--bg);z-index:4;border-bottom:1px solid var(--line)}
#toggles fieldset{display:flex;flex-wrap:wrap;gap:0 10px;border:0;margin:0;padding:0}
#toggles legend{float:left;padding:0 4px 0 0;color:var(--mut)}
#toggles label{white-space:nowrap}
#toggles .hint{color:var(--mut)}
#panes{display:flex;gap:8px;padding:8px 18px 64px;overflow-x:auto;align-items:stretch}
.pane{flex:1 1 0;min-width:19em;background:var(--pane);border:1px solid var(--line);display:flex;
flex-direction:column}
.pane[hidden],body.focus .pane:not(.focused){display:none}
.pane h2{display:flex;flex-wrap:wrap;align-items:baseline;gap:0 6px;padding:6px 8px;
border-bottom:1px solid var(--line);font-weight:600}
.pane h2 small{font-weight:normal;color:var(--mut)}
.pane h2 .folded{font-weight:normal;font-size:12px;color:#8a5a00}
.pane h2 .tools{margin-left:auto;white-space:nowrap}
.pane h2 button{font:12px system-ui,sans-serif;padding:0 6px;margin-left:2px;border:1px solid var(--line);
border-radius:3px;background:var(--bg);color:var(--fg);cursor:pointer}
.pane h2 button:hover{background:#ecece6}
.pane.focused h2 button.focus{background:var(--hl2)}
.code{position:relative;overflow:auto;max-height:78vh;font:12px/1.5 ui-monospace,"SFMono-Regular",Menlo,
Consolas,monospace}
.l{display:flex;min-height:1.5em;min-width:100%;width:max-content;border-left:3px solid transparent;
cursor:default;background:var(--pane)}
.l[data-py]{cursor:pointer}
.l[data-py]:hover{background:#f3f3ee}
.l.hl{background:var(--hl);border-left-color:var(--hl2)}
.l.sel{background:var(--hl2)}
.n{flex:none;width:3.6em;padding-right:8px;text-align:right;color:var(--mut);user-select:none;
position:sticky;left:0;z-index:1;background:inherit}
.t{flex:1 0 auto;white-space:pre;tab-size:4}
.m{flex:none;max-width:19em;padding:0 4px 0 6px;text-align:right;position:sticky;right:0;background:inherit;
white-space:nowrap;box-shadow:-5px 0 5px -5px rgba(0,0,0,.25)}
.m .more{font:11px/1.5 system-ui,sans-serif;color:var(--mut);margin-left:3px;vertical-align:top}
body:not(.wrap) .m .more~.note{display:none}
body:not(.wrap) .m .note{max-width:7.5em}
body:not(.wrap) .l:hover .m .note{max-width:16em}
body.wrap .m{white-space:normal;box-shadow:none}
body.wrap .m .more{display:none}
body.wrap .l{width:auto}
body.wrap .t{flex:1 1 auto;white-space:pre-wrap;overflow-wrap:anywhere;min-width:0}
body.squeeze .pane.aligned .t{white-space:nowrap}
body.wrap.squeeze .pane.aligned .t{white-space:normal}
.t .i{white-space:pre}
.l.z{display:none}
body.show-debug .l.z-debug,body.show-header .l.z-header,body.show-directive .l.z-directive,
body.show-comment .l.z-comment{display:flex}
.l.z .t{color:var(--mut)}
.note{display:inline-block;margin-left:4px;padding:0 5px;border-radius:3px;font:11px/1.5 system-ui,sans-serif;
color:#fff;background:var(--note);white-space:nowrap;max-width:10.5em;overflow:hidden;text-overflow:ellipsis;
vertical-align:top;cursor:help}
.note.k-cost{background:var(--cost)}
.note.k-encoding{background:#6b3fa0}
.note.k-instruction{background:#1b7340}
.note.k-info{background:#5b636b}
.note.k-remark{background:#a15c00}
#remarks{flex-basis:100%;max-width:80em}
#remarks ul{margin:4px 0;padding-left:18px}
#remarks .sev{font-weight:600;color:#a15c00}
#remarks button.go{font:inherit;padding:0;border:0;background:none;color:var(--note);text-decoration:underline;
cursor:pointer}
#remarks code{font:12px ui-monospace,monospace;color:var(--mut)}
#explain{flex-basis:100%;max-width:100em}
#explain ul{margin:4px 0;padding-left:0;list-style:none}
#explain li{margin:0 0 6px}
#explain .mark{display:inline-block;width:1.2em;font-weight:700}
#explain .sev-ok .mark{color:#1b7340}
#explain .sev-info .mark{color:#1f5fa8}
#explain .sev-warn .mark{color:#a15c00}
#explain .sev-bad .mark,#explain .sev-bad>b{color:var(--cost)}
#explain li.skipped{color:var(--mut)}
#explain table.ev{margin:2px 0 2px 1.2em}
#explain table.ev td{padding:0 10px 0 0;font:12px ui-monospace,monospace;color:var(--mut);white-space:nowrap}
#explain table.ev td code{white-space:pre-wrap;color:var(--fg)}
#explain .fix{margin-left:1.2em}
#explain button.go{font:inherit;padding:0;border:0;background:none;color:var(--note);text-decoration:underline;
cursor:pointer}
#explain .src,#explain .tally{color:var(--mut);margin:2px 0}
#passes{padding:0 18px 10px}
#passes table td{border-bottom:1px solid var(--line);padding:1px 10px 1px 0}
#passes tr.folded td{color:var(--mut);font-style:italic}
#passes td.num{text-align:right;font-variant-numeric:tabular-nums}
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
    if (!firsts.has(p) && lit[i].offsetParent !== null) firsts.set(p, lit[i]);  // not a folded line
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
function onChange(selector, fn) {
  var els = document.querySelectorAll(selector);
  for (var i = 0; i < els.length; i++) els[i].addEventListener('change', fn);
}
function unfocus() {
  var f = document.querySelectorAll('.pane.focused');
  for (var i = 0; i < f.length; i++) f[i].classList.remove('focused');
  document.body.classList.remove('focus');
}
onChange('#toggles input[data-stage]', function(ev){
  var s = ev.target.getAttribute('data-stage');
  unfocus();  // a pane shown or hidden by hand ends "focus this pane"
  document.querySelector('.pane[data-stage="' + s + '"]').hidden = !ev.target.checked;
});
// noise filters: a body class per kind shows that kind's lines (they keep their real numbers)
onChange('#toggles input[data-noise]', function(ev){
  document.body.classList.toggle('show-' + ev.target.getAttribute('data-noise'), ev.target.checked);
  var notes = document.querySelectorAll('.folded[data-counts]');
  for (var i = 0; i < notes.length; i++) {
    var parts = [], pairs = notes[i].getAttribute('data-counts').split(',');
    for (var j = 0; j < pairs.length; j++) {
      var kv = pairs[j].split(':');
      if (!document.body.classList.contains('show-' + kv[0])) parts.push(Number(kv[1]).toLocaleString('en-US') + ' ' + kv[0]);
    }
    notes[i].textContent = parts.length ? 'hidden: ' + parts.join(' \u00b7 ') : '';
    notes[i].hidden = !parts.length;
  }
});
onChange('#toggles input[data-wrap]', function(ev){
  document.body.classList.toggle('wrap', ev.target.checked);
});
onChange('#toggles input[data-squeeze]', function(ev){
  document.body.classList.toggle('squeeze', ev.target.checked);
});
// pane tools: wider / narrower (a share of the row), focus (this pane alone, full width)
document.getElementById('panes').addEventListener('click', function(ev){
  var btn = ev.target.closest('h2 button[data-act]');
  if (!btn) return;
  var pane = paneOf(btn), act = btn.getAttribute('data-act');
  if (act === 'focus') {
    var on = !pane.classList.contains('focused');
    unfocus();
    if (on) { pane.classList.add('focused'); document.body.classList.add('focus'); }
    btn.setAttribute('aria-pressed', on ? 'true' : 'false');
    return;
  }
  var w = (+pane.getAttribute('data-w') || 1) + (act === 'wider' ? 1 : -1);
  w = Math.max(1, Math.min(6, w));
  pane.setAttribute('data-w', String(w));
  pane.style.flexGrow = String(w);
  pane.style.minWidth = (19 * w) + 'em';
});
// Triton's remarks and explain's evidence: a Python line's place selects it, as clicking the line does
['remarks', 'explain'].forEach(function(id){
  var section = document.getElementById(id);
  if (section) section.addEventListener('click', function(ev){
    var a = ev.target.closest('button[data-py]');
    if (!a) return;
    ev.preventDefault();
    var py = a.getAttribute('data-py');
    var el = document.querySelector('.pane[data-stage="python"] .l[data-py="' + py + '"]');
    if (el) { select(py, el); el.scrollIntoView({block: 'nearest'}); }
  });
});
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


# The sections the top box holds (the page's at-a-glance part); the other sections follow it, and the
# stages are panes under the toggles.
TOP = ("summary", "explain", "remarks", "mix")


def render_html(analysis: Analysis, *, hide: frozenset[str] | None = None, page=None) -> str:
    """The report page: the sections of `page` (default: sections.build's report page).

    Noise lines (debug sections, directives, comments: each dialect's noise())
    are in the page but folded when their kind is in `hide` (default: every
    kind; `--raw` passes none); a checkbox per kind unfolds them, and every
    line keeps its number."""
    from tritonscope.outputs import sections
    from tritonscope.outputs.render import noise

    page = page or sections.build(analysis)
    hide = noise.DEFAULT_HIDE if hide is None else hide
    keys = [s.data for s in page.sections if s.kind == "stage"]
    views = {key: noise.view_lines(analysis, key, raw=noise.is_raw(hide)) for key in keys}
    kinds = {key: noise.classify(key, lines) for key, lines in views.items()}
    present = noise.ordered_kinds({kind for per_stage in kinds.values() for kind in per_stage.values()})
    out: list[str] = []
    w = out.append
    _head(analysis, w, body_class=" ".join(["squeeze"] + [f"show-{_e(k)}" for k in present if k not in hide]))
    w("<div id=\"top\">\n")
    for section in page.sections:
        if section.kind in TOP:
            _SECTIONS[section.kind](analysis, section.data, w)
    w("</div>\n")
    for section in page.sections:
        if section.kind not in TOP and section.kind in _SECTIONS:
            _SECTIONS[section.kind](analysis, section.data, w)
    _toggles(keys, kinds, present, hide, w)
    w("<main id=\"panes\">\n")
    shown = [k for k in keys if k not in HIDDEN_AT_FIRST] or keys
    for key in keys:
        _pane(analysis, key, w, hidden=key not in shown, kinds=kinds[key], lines=views[key], hide=hide,
              kernel_files=page.kernel_files)
    w("</main>\n<div id=\"info\" hidden></div>\n")
    w(f"<footer>tritonscope report · {_e(analysis.artifact.spec.kernel)} · kernel hash "
      f"{_e(analysis.artifact.kernel_hash)}</footer>\n")
    w(f"<script>{_JS}</script>\n</body>\n</html>\n")
    return "".join(out)


def _head(analysis: Analysis, w, *, body_class: str) -> None:
    """From the doctype to the page's heading: the policy, the title, the style, <body>."""
    a = analysis.artifact
    spec = a.spec
    w("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
    w(f"<meta http-equiv=\"Content-Security-Policy\" content=\"{_e(_csp(_JS))}\">\n")
    w("<meta name=\"referrer\" content=\"no-referrer\">\n")
    w("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
    w(f"<meta name=\"generator\" content=\"tritonscope\">\n<title>{_e(spec.kernel)} · {_e(spec.label())}"
      " · tritonscope</title>\n")
    w(f"<style>{_CSS}</style>\n</head>\n<body class=\"{body_class}\">\n")
    w(f"<header><h1>{_e(spec.kernel)} <small>{_e(spec.label())} · Triton {_e(a.triton_version)}</small></h1>"
      "</header>\n")


def _summary_section(analysis: Analysis, summary, w) -> None:
    """The summary's rows (a problem row in red) and the compiler's warnings."""
    w("<section id=\"summary\"><table class=\"kv\">\n")
    for label, value in summary.rows:
        cls = " class=\"bad\"" if label in BAD_LABELS else ""
        w(f"<tr><td>{_e(label)}</td><td{cls}>{_e(value)}</td></tr>\n")
    w("</table>\n")
    for warning in summary.warnings:
        w(f"<p class=\"warn\">warning: {_e(warning)}</p>\n")
    w("</section>\n")


def _mix_section(analysis: Analysis, mix, w) -> None:
    """One small table per stage that counts instructions."""
    w("<section id=\"mix\"><h2>Instruction mix</h2><div class=\"mixes\">")
    for key, counts in mix.per_stage:
        w(f"<table class=\"mix\" data-stage=\"{_e(key)}\"><tr><th>{_e(key.upper())}</th><th></th></tr>\n")
        for cls_name, n in counts.items():
            w(f"<tr><td>{_e(cls_name)}</td><td class=\"c\">{_e(n)}</td></tr>\n")
        w("</table>\n")
    w("</div></section>\n")


def _layouts_section(analysis: Analysis, layouts, w) -> None:
    figures = _layout_figures(layouts)
    if figures:
        w("<section id=\"layouts\"><h2>Layouts</h2>\n" + "".join(figures) + "</section>\n")


def _toggles(keys: list[str], kinds: dict, present: list[str], hide: frozenset[str], w) -> None:
    """The bar of checkboxes: a pane per stage, a kind of noise, wrapping, squeezing."""
    shown = [k for k in keys if k not in HIDDEN_AT_FIRST] or keys
    w("<nav id=\"toggles\"><fieldset id=\"stages\"><legend>stages:</legend>")
    for key in keys:
        checked = " checked" if key in shown else ""
        w(f"<label><input type=\"checkbox\" data-stage=\"{_e(key)}\"{checked}> {_e(key)}</label>")
    w("</fieldset>")
    if present:  # the noise filters: ticked = shown
        w("<fieldset id=\"noise\"><legend>show:</legend>")
        for kind in present:
            count = sum(1 for per_stage in kinds.values() for k in per_stage.values() if k == kind)
            checked = "" if kind in hide else " checked"
            w(f"<label title=\"{count:,} lines in all\"><input type=\"checkbox\" data-noise=\"{_e(kind)}\"{checked}>"
              f" {_e(kind)} lines</label>")
        w("</fieldset>")
    w("<label><input type=\"checkbox\" data-wrap> wrap long lines</label>")
    w("<label title=\"PTX and SASS pad their columns with blanks; squeezed, a narrow pane shows the instructions\">"
      "<input type=\"checkbox\" data-squeeze checked> squeeze PTX/SASS blanks</label>")
    w("<span class=\"hint\">click a line to highlight what the same Python line became in every stage"
      " (Esc clears); hover a note for its explanation</span></nav>\n")


def _pane(analysis: Analysis, key: str, w, hidden: bool = False, kinds: dict[int, str] | None = None,
          lines: tuple | None = None, hide: frozenset[str] | None = None,
          kernel_files: frozenset[str] | None = None) -> None:
    title = dialect(key).title
    stage = analysis.parsed[key]
    notes = analysis.notes_for(key)
    from tritonscope.outputs.render import noise

    kinds = kinds or {}
    hide = noise.DEFAULT_HIDE if hide is None else hide
    lines = stage.lines if lines is None else lines  # every line of the stage text, noise included
    counts: dict[str, int] = {}
    for kind in kinds.values():
        counts[kind] = counts.get(kind, 0) + 1
    folded = {kind: counts[kind] for kind in noise.ordered_kinds(counts)}
    aligned = dialect(key).columns   # blank-padded columns: the pane squeezes runs of blanks unless unticked
    pane_class = "pane aligned" if aligned else "pane"
    w(f"<section class=\"{pane_class}\" data-stage=\"{_e(key)}\"{' hidden' if hidden else ''}><h2>{_e(title)} <small>{len(lines)} lines"
      f"{f', {sum(map(len, notes.values()))} notes' if notes else ''}</small>")
    if folded:  # what the noise filters fold here (the page's script keeps it current)
        counts_attr = ",".join(f"{k}:{n}" for k, n in folded.items())
        still = [f"{n:,} {k}" for k, n in folded.items() if k in hide]
        w(f"<span class=\"folded\" data-counts=\"{_e(counts_attr)}\" title=\"lines folded away: tick them under "
          f"'show' above\"{'' if still else ' hidden'}>{_e(_folded_text(still))}</span>")
    w("<span class=\"tools\"><button type=\"button\" data-act=\"narrower\" title=\"narrower\">\u2212</button>"
      "<button type=\"button\" data-act=\"wider\" title=\"wider\">+</button>"
      "<button type=\"button\" class=\"focus\" data-act=\"focus\" title=\"show this pane alone (again: all)\">"
      "focus</button></span></h2><div class=\"code\">\n")
    for line in lines:
        py = python_line_of(analysis, key, line, kernel_files)
        number = py if dialect(key).is_source and py is not None else line.number
        attrs = f" data-py=\"{py}\"" if py is not None else ""
        line_notes = notes.get(line.number, ())
        if line_notes:
            attrs += f" title=\"{_e(_note_tooltip(line_notes))}\""
        kind = kinds.get(line.number)
        cls = f"l z z-{_e(kind)}" if kind else "l"
        text = line.text
        if aligned and text[:1].isspace():  # the indent survives squeezing (labels vs instructions)
            body = text.lstrip()
            text_html = f"<span class=\"i\">{_e(text[:len(text) - len(body)])}</span>{_e(body)}"
        else:
            text_html = _e(text)
        w(f"<div class=\"{cls}\"{attrs}><span class=\"n\">{number}</span><span class=\"t\">{text_html}</span>")
        if line_notes:  # unwrapped, a line shows its first note and "+N" (all of them on hover / click)
            more = f"<span class=\"more\">+{len(line_notes) - 1}</span>" if len(line_notes) > 1 else ""
            w("<span class=\"m\">" + _note(line_notes[0]) + more + "".join(_note(n) for n in line_notes[1:])
              + "</span>")
        w("</div>\n")
    w("</div></section>\n")


def _remarks_section(analysis: Analysis, remarks, w) -> None:
    """Triton's remarks, each linked to its Python line (a click selects it, as clicking the line does)."""
    from tritonscope.analyses.remarks import made_by

    said, src = remarks.said, remarks.source
    w("<section id=\"remarks\"><h2>Triton's remarks</h2><ul>\n")
    for r, details in said:
        where = _e(r.where())
        if r.line in src:  # in the kernel: a link to the line
            where = f"<button type=\"button\" class=\"go\" data-py=\"{r.line}\">{where}</button>"
        by = f" ({_e(made_by(r))})" if r.stage else ""
        w(f"<li class=\"remark sev-{_e(r.severity)}\">{where} <span class=\"sev\">{_e(r.severity)}</span>{by}: "
          f"{_e(r.said)}")
        for d in details:
            w(f"<br>note: {_e(d.said)}")
        if r.line in src:
            w(f"<br><code>{r.line}: {_e(src[r.line].strip())}</code>")
        w("</li>\n")
    w("</ul></section>\n")


def _explain_section(analysis: Analysis, expl, w) -> None:
    """explain's verdicts (`compile --explain`, `explain --save`): mark, kind, title, evidence and fix; a Python
    line in the evidence selects that line, as clicking it does."""
    from tritonscope.outputs.render.explain_view import MARK, SKIP_MARK, source_lines, tally, where
    from tritonscope.outputs.sections import python_source

    src = set(python_source(analysis))
    w(f"<section id=\"explain\"><h2>Explain</h2><p>{_e(expl.label)} · Triton {_e(expl.triton_version)}")
    if expl.checked_compiles:
        w(f" · {expl.checked_compiles} candidate compile{'s' if expl.checked_compiles != 1 else ''} to check fixes")
    w("</p>\n")
    for line in source_lines(expl):
        w(f"<p class=\"src\">{_e(line)}</p>\n")
    w("<ul>\n")
    for v in expl.verdicts:
        w(f"<li class=\"verdict sev-{_e(v.severity)}\"><span class=\"mark\">{_e(MARK.get(v.severity, '?'))}</span> "
          f"<b>{_e(v.kind)}</b> {_e(v.title)}")
        if v.evidence:
            w("<table class=\"ev\">")
            for stage, line, text in v.evidence:
                place = _e(where(stage, line))
                if dialect(stage).is_source and line in src:  # in the kernel: a link to the line
                    place = f"<button type=\"button\" class=\"go\" data-py=\"{line}\">{place}</button>"
                w(f"<tr><td>{place}</td><td><code>{_e(text)}</code></td></tr>")
            w("</table>")
        if v.fix:
            w(f"<div class=\"fix\"><b>fix{' (checked)' if v.fix_checked else ''}:</b> {_e(v.fix)}</div>")
        w("</li>\n")
    for item in expl.skipped:
        w(f"<li class=\"verdict skipped\"><span class=\"mark\">{SKIP_MARK}</span> <b>{_e(item['kind'])}</b> "
          f"not judged: {_e(item['reason'])}</li>\n")
    w("</ul>\n<p class=\"tally\">" + _e(" · ".join(f"{n} {s}" for s, n in tally(expl)) or "nothing to report")
      + "</p></section>\n")


def _passes_section(analysis: Analysis, trace, w) -> None:
    """The pass table a `--passes` compile carries (unchanged runs folded, as in the terminal)."""
    from tritonscope.outputs.render.passes_view import table_rows, table_title

    w(f"<section id=\"passes\"><h2>Compiler passes</h2><p>{_e(table_title(trace))}</p>\n<table>"
      "<tr><th>step</th><th>pass</th><th>stage</th><th>+lines</th><th>-lines</th><th>what changed</th>"
      "<th>ms</th></tr>\n")
    for row in table_rows(trace):
        cls = " class=\"folded\"" if row["folded"] else ""
        w(f"<tr{cls}><td class=\"num\">{_e(row['step'])}</td><td>{_e(row['pass'])}</td><td>{_e(row['stage'])}</td>"
          f"<td class=\"num\">{_e(row['added'])}</td><td class=\"num\">{_e(row['removed'])}</td>"
          f"<td>{_e(row['what'])}</td><td class=\"num\">{_e(row['ms'])}</td></tr>\n")
    w("</table></section>\n")


def _folded_text(parts: list[str]) -> str:
    """['296 debug', '3 header'] -> 'hidden: 296 debug · 3 header' (the script writes the same)."""
    return "hidden: " + " \u00b7 ".join(parts) if parts else ""


def _note_tooltip(notes) -> str:
    return "\n".join(f"{n.label}: {n.explanation}" for n in notes)


def _note(note: Note) -> str:
    tip = note.explanation + (f"\n(see {note.reference})" if note.reference else "")
    kind = re.sub(r"[^a-z0-9-]", "", note.kind.lower())
    return f"<span class=\"note k-{kind}\" title=\"{_e(tip)}\">{_e(note.label)}</span>"


# How each section looks on the page (render_html places them: TOP, then the rest).
_SECTIONS = {"summary": _summary_section, "explain": _explain_section, "remarks": _remarks_section,
             "mix": _mix_section, "passes": _passes_section, "layouts": _layouts_section}


# SVG from our own layout drawer is inlined; anything that could load or run
# something is refused rather than trusted.
_UNSAFE_SVG = re.compile(r"<\s*(?:script|foreignObject|iframe|image|use)\b|\son\w+\s*=|javascript:|"
                         r"(?:xlink:)?href\s*=\s*[\"'](?!#)|url\(\s*[\"']?(?!#)", re.I)


def _layout_figures(layouts) -> list[str]:
    if not layouts:
        return []
    try:
        from tritonscope.outputs.render.layout_view import layout_svg
    except ImportError:
        return ["<p class=\"warn\">Layout drawings are not available in this tritonscope.</p>"]
    figures = []
    for layout in layouts:
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
        title = dialect(key).title
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

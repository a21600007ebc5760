"""The HTML report in a real browser: headless Chromium (Debian's `chromium`).

Chromium is driven through the DevTools protocol over
`--remote-debugging-pipe` (fd 3 in, fd 4 out, NUL-separated JSON), so the
test needs nothing beyond the standard library.  It checks that the page
loads with no console errors and no network requests, that clicking a Python
line highlights the linked lines in the other stages, and that the layout
SVG is present.  It saves a screenshot and prints its path.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "tests" / "artifacts"


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    """A headless Chromium and one page, spoken to over the DevTools pipe."""

    def __init__(self, exe: str, profile: str):
        r_ours, w_chrome = os.pipe()   # chromium writes fd 4 -> we read
        r_chrome, w_ours = os.pipe()   # we write -> chromium reads fd 3
        self._r = os.fdopen(r_ours, "rb", buffering=0)
        self._w = os.fdopen(w_ours, "wb", buffering=0)

        def child_fds():  # runs before subprocess closes fds: keep 3 and 4 via pass_fds
            os.dup2(r_chrome, 3)
            os.dup2(w_chrome, 4)

        self.log = open(os.path.join(profile + ".log"), "wb")

        self.proc = subprocess.Popen(
            [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", "--no-default-browser-check",
             "--disable-extensions", "--disable-dev-shm-usage", "--mute-audio", "--hide-scrollbars",
             f"--user-data-dir={profile}", "--remote-debugging-pipe", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.log,
            preexec_fn=child_fds, pass_fds=(3, 4))
        os.close(r_chrome)
        os.close(w_chrome)
        self._id = 0
        self.events: list[dict] = []
        self._replies: dict[int, dict] = {}
        self._cond = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.session = None

    def _read(self):
        buf = b""
        while True:
            chunk = self._r.read(65536)
            if not chunk:
                break
            buf += chunk
            while b"\0" in buf:
                raw, buf = buf.split(b"\0", 1)
                msg = json.loads(raw)
                with self._cond:
                    if "id" in msg:
                        self._replies[msg["id"]] = msg
                    else:
                        self.events.append(msg)
                    self._cond.notify_all()
        with self._cond:
            self._cond.notify_all()

    def send(self, method: str, params: dict | None = None, *, session: bool = True, timeout: float = 30):
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        self._w.write(json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._id not in self._replies:
                left = deadline - time.monotonic()
                if left <= 0 or self.proc.poll() is not None:
                    raise TimeoutError(f"no reply to {method}; chromium said: {self._said()}")
                self._cond.wait(left)
            reply = self._replies.pop(self._id)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    def _said(self) -> str:
        self.log.flush()
        with open(self.log.name, "rb") as f:
            return f.read()[-2000:].decode(errors="replace")

    def wait_event(self, method: str, timeout: float = 30) -> dict:
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for ev in self.events:
                    if ev.get("method") == method:
                        return ev
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no {method} event")
                self._cond.wait(left)

    def eval(self, expression: str):
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True})
        if "exceptionDetails" in result:
            raise RuntimeError(f"page script failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def open(self, url: str, width: int = 1600, height: int = 1000):
        target = self.send("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True},
                                 session=False)["sessionId"]
        for domain in ("Runtime", "Log", "Network", "Page"):
            self.send(f"{domain}.enable")
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        self.send("Page.navigate", {"url": url})
        self.wait_event("Page.loadEventFired")

    def click(self, x: float, y: float):
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1})

    def screenshot(self, path: Path):
        data = self.send("Page.captureScreenshot", {"format": "png"})["data"]
        path.write_bytes(base64.b64decode(data))

    def close(self):
        try:
            self.send("Browser.close", session=False, timeout=5)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._w.close()
        self.log.close()


@pytest.fixture(scope="module")
def chromium():
    exe = _chromium()
    if not exe:
        if os.environ.get("CI"):
            pytest.fail("chromium is missing in CI: the README's test command installs it")
        pytest.skip("chromium is not installed (Debian: apt-get install -y chromium); CI installs it")
    return exe


@pytest.fixture(scope="module")
def report_page(compiled, chromium, tmp_path_factory):
    """The matmul BLOCK=16 report (with layouts when this tritonscope draws them), open in Chromium."""
    from tritonscope.analyses.analysis import analyze
    from tritonscope.outputs.save import save_report

    analysis = analyze(compiled("matmul", block=16))
    analysis.layouts = _layouts(analysis)
    tmp = tmp_path_factory.mktemp("browser")
    path = save_report(analysis, tmp / "matmul.html")
    browser = Browser(chromium, str(tmp / "profile"))
    try:
        browser.open(path.resolve().as_uri())
        browser.eval("new Promise(r => { const f = () => document.body.dataset.ready ? r(1) : setTimeout(f, 20); f(); })")
        yield browser, path, analysis
    finally:
        browser.close()


def _layouts(analysis):
    try:
        from tritonscope.language.layouts import layouts_of
        from tritonscope.outputs.render.layout_view import layout_svg  # noqa: F401
    except ImportError:
        return []
    return layouts_of(analysis)


def _dot_line(analysis) -> int:
    for line in analysis.parsed["python"].lines:
        if "tl.dot" in line.text:
            return line.loc.line if line.loc else analysis.artifact.python_first_line + line.number - 1
    raise AssertionError("no tl.dot line in the matmul sample")


def test_loads_without_errors_or_network(report_page):
    browser, path, _ = report_page
    errors = [ev for ev in browser.events
              if ev["method"] == "Runtime.exceptionThrown"
              or (ev["method"] == "Runtime.consoleAPICalled" and ev["params"]["type"] in ("error", "assert"))
              or (ev["method"] == "Log.entryAdded" and ev["params"]["entry"]["level"] == "error")]
    assert not errors, f"console errors: {errors}"
    urls = [ev["params"]["request"]["url"] for ev in browser.events if ev["method"] == "Network.requestWillBeSent"]
    assert urls == [path.resolve().as_uri()], f"the page made requests beyond itself: {urls}"
    assert not [ev for ev in browser.events if ev["method"] == "Page.javascriptDialogOpening"]
    assert browser.eval("document.querySelectorAll('.pane').length") == 6
    assert browser.eval("[...document.querySelectorAll('.pane')].filter(p => p.offsetWidth > 200).length") == 5
    # the llir checkbox shows its pane
    browser.eval("document.querySelector('#toggles input[data-stage=llir]').click()")
    assert browser.eval("document.querySelector('.pane[data-stage=llir]').offsetWidth") > 200
    browser.eval("document.querySelector('#toggles input[data-stage=llir]').click()")
    assert browser.eval("document.querySelector('.pane[data-stage=llir]').offsetWidth") == 0


def test_click_python_line_highlights_linked_lines(report_page):
    browser, path, analysis = report_page
    py = _dot_line(analysis)
    # stages whose parsers link lines to this Python line (what the page should highlight)
    from tritonscope.outputs.render.html import python_line_of

    expected = {key: sum(1 for ln in st.lines if python_line_of(analysis, key, ln) == py)
                for key, st in analysis.parsed.items()}
    expected = {k: n for k, n in expected.items() if n}
    assert expected.get("python") == 1
    selector = f".pane[data-stage=\"python\"] .l[data-py=\"{py}\"]"
    where = (f"(() => {{ const el = document.querySelector('{selector}'); el.scrollIntoView({{block: 'center'}});"
             " const r = el.getBoundingClientRect(); return [r.left + 40, r.top + r.height / 2]; })()")
    rect = browser.eval(where)
    assert browser.eval("document.querySelectorAll('.l.hl').length") == 0
    browser.click(*rect)  # a real mouse click at the line's position
    lit = browser.eval("(() => { const out = {}; document.querySelectorAll('.l.hl').forEach(el => {"
                       " const s = el.closest('.pane').dataset.stage; out[s] = (out[s] || 0) + 1; }); return out; })()")
    assert lit == expected, f"highlighted per stage {lit}, linked per stage {expected}"
    assert browser.eval("[...document.querySelectorAll('.l.hl')].every(el => el.dataset.py === '%d')" % py)
    info = browser.eval("document.getElementById('info').hidden ? null : document.getElementById('info').textContent")
    assert info and f"Python line {py}" in info and "tl.dot" in info
    if len(expected) > 1:  # every other pane scrolled its first linked line into view
        assert browser.eval("""[...document.querySelectorAll('.pane')].filter(p => p.dataset.stage !== 'python'
            && p.querySelector('.l.hl')).every(p => { const c = p.querySelector('.code').getBoundingClientRect();
            const r = p.querySelector('.l.hl').getBoundingClientRect(); return r.top >= c.top && r.bottom <= c.bottom; })""")
    ARTIFACTS.mkdir(exist_ok=True)
    for name, script in (("report_matmul_panes.png", "document.getElementById('toggles').scrollIntoView()"),
                         ("report_matmul_top.png", "window.scrollTo(0, 0)")):
        shot = ARTIFACTS / name
        browser.eval(script)
        browser.screenshot(shot)
        print(f"\nscreenshot: {shot}")
        assert shot.stat().st_size > 10_000
    browser.click(*browser.eval(where))  # clicking the same line again clears the highlight
    assert browser.eval("document.querySelectorAll('.l.hl').length") == 0


def test_layout_svg_present(report_page):
    browser, _, analysis = report_page
    assert analysis.layouts, "the report was saved without layouts"
    n = browser.eval("document.querySelectorAll('#layouts figure.layout > svg').length")
    assert n == len(analysis.layouts)
    size = browser.eval("(() => { const r = document.querySelector('#layouts svg').getBoundingClientRect();"
                        " return [r.width, r.height]; })()")
    assert size[0] > 50 and size[1] > 50, f"the layout SVG does not render at a visible size: {size}"


def test_hostile_report_runs_nothing(chromium, tmp_path):
    """A kernel comment that tries to inject a script shows as text and runs nothing."""
    from test_report import hostile_analysis
    from tritonscope.outputs.save import save_report

    path = save_report(hostile_analysis(tmp_path), tmp_path / "hostile.html")
    browser = Browser(chromium, str(tmp_path / "profile"))
    try:
        browser.open(path.resolve().as_uri())
        assert not [ev for ev in browser.events if ev["method"] == "Page.javascriptDialogOpening"]
        assert browser.eval("window.__pwned === undefined")
        assert browser.eval("document.querySelectorAll('script').length") == 1
        assert browser.eval("document.querySelectorAll('img, iframe, object, embed').length") == 0
        text = browser.eval("document.querySelector('.pane[data-stage=\"python\"]').textContent")
        assert "</pre><script>" in text
    finally:
        browser.close()


@pytest.fixture(scope="module")
def grouped_page(compiled, chromium, tmp_path_factory):
    """The 128x256x64 grouped matmul's report (sm_90a), open in Chromium at 1600x1000."""
    from tritonscope.analyses.analysis import analyze
    from tritonscope.outputs.save import save_report

    analysis = analyze(compiled("matmul_grouped", arch="sm_90a"))
    tmp = tmp_path_factory.mktemp("grouped")
    path = save_report(analysis, tmp / "grouped.html")
    browser = Browser(chromium, str(tmp / "profile"))
    try:
        browser.open(path.resolve().as_uri())
        browser.eval("new Promise(r => { const f = () => document.body.dataset.ready ? r(1) : setTimeout(f, 20); f(); })")
        yield browser, analysis
    finally:
        browser.close()


# The TTGIR line that defines #blocked, and a short line to compare its height with.
_BLOCKED = ("[...document.querySelectorAll('.pane[data-stage=ttgir] .l')]"
            ".find(el => el.querySelector('.t').textContent.startsWith('#blocked = '))")
_SHORT = ("[...document.querySelectorAll('.pane[data-stage=ttgir] .l')]"
          ".find(el => el.querySelector('.t').textContent.startsWith('#smem = '))")


def _blocked_height(browser) -> tuple[float, float]:
    return tuple(browser.eval(f"(() => [{_BLOCKED}.getBoundingClientRect().height,"
                              f" {_SHORT}.getBoundingClientRect().height])()"))


def test_blocked_definition_on_one_line(grouped_page):
    """Lines do not wrap: the whole `#blocked = #ttg.blocked<{...}>` definition sits on one line,
    and the pane scrolls sideways instead."""
    browser, analysis = grouped_page
    definition = next(ln.text for ln in analysis.parsed["ttgir"].lines if ln.text.startswith("#blocked = "))
    assert definition.endswith("}>") and "sizePerThread" in definition and "order" in definition
    assert browser.eval(f"{_BLOCKED}.querySelector('.t').textContent") == definition  # all of it, not cut
    height, one_line = _blocked_height(browser)
    assert height == one_line and 12 <= one_line <= 24, (height, one_line)
    code = browser.eval("(() => { const c = document.querySelector('.pane[data-stage=ttgir] .code');"
                        " return [c.scrollWidth, c.clientWidth]; })()")
    assert code[0] >= code[1]  # scrolls sideways (allowed), never wraps
    # the line number stays in view when the pane is scrolled sideways
    left = browser.eval("(() => { const c = document.querySelector('.pane[data-stage=ttgir] .code');"
                        f" c.scrollLeft = 400; const n = {_BLOCKED}.querySelector('.n').getBoundingClientRect();"
                        " const r = c.getBoundingClientRect(); c.scrollLeft = 0; return n.left - r.left; })()")
    assert 0 <= left < 8, left


def test_pane_toggles(grouped_page):
    """wrap, focus, wider/narrower and the stage checkboxes; then a screenshot to look at."""
    browser, _ = grouped_page
    widths = "[...document.querySelectorAll('.pane')].map(p => [p.dataset.stage, p.offsetWidth])"
    before = dict(browser.eval(widths))
    assert sum(w > 200 for w in before.values()) == 5 and before["llir"] == 0
    # wrap long lines: the definition takes several lines; unticked, one again
    one_line = _blocked_height(browser)[1]  # measured unwrapped: wrapped, the short line may wrap too
    browser.eval("document.querySelector('#toggles input[data-wrap]').click()")
    height = _blocked_height(browser)[0]
    assert height >= 3 * one_line, (height, one_line)
    browser.eval("document.querySelector('#toggles input[data-wrap]').click()")
    assert _blocked_height(browser)[0] == one_line
    # wider: the TTGIR pane takes a bigger share; narrower gives it back
    for act in ("wider", "wider"):
        browser.eval(f"document.querySelector('.pane[data-stage=ttgir] button[data-act={act}]').click()")
    wide = dict(browser.eval(widths))
    assert wide["ttgir"] > 2 * before["ttgir"], (before, wide)
    for act in ("narrower", "narrower", "narrower"):  # never below its first width
        browser.eval(f"document.querySelector('.pane[data-stage=ttgir] button[data-act={act}]').click()")
    assert dict(browser.eval(widths))["ttgir"] == before["ttgir"]
    # focus: the pane alone, full width; again: every pane back
    browser.eval("document.querySelector('.pane[data-stage=ttgir] button[data-act=focus]').click()")
    focused = dict(browser.eval(widths))
    assert [k for k, w in focused.items() if w] == ["ttgir"] and focused["ttgir"] > 1400, focused
    assert _blocked_height(browser)[0] == one_line
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "report_grouped_ttgir_focus.png"
    browser.eval("document.getElementById('toggles').scrollIntoView()")
    browser.screenshot(shot)
    print(f"\nscreenshot: {shot}")
    browser.eval("document.querySelector('.pane[data-stage=ttgir] button[data-act=focus]').click()")
    assert dict(browser.eval(widths)) == before
    # a stage checkbox hides and shows its pane
    browser.eval("document.querySelector('#toggles input[data-stage=ptx]').click()")
    assert dict(browser.eval(widths))["ptx"] == 0
    browser.eval("document.querySelector('#toggles input[data-stage=ptx]').click()")
    assert dict(browser.eval(widths)) == before
    shot = ARTIFACTS / "report_grouped_panes.png"
    browser.screenshot(shot)
    print(f"screenshot: {shot}")
    assert shot.stat().st_size > 10_000


def test_noise_toggles(grouped_page):
    """Noise lines (each dialect's noise()) are folded, with one count per kind in the pane's title; a
    checkbox per kind shows them; folded or not, every line keeps its real number."""
    from tritonscope.outputs.render import noise

    browser, analysis = grouped_page
    ptx_lines = noise.view_lines(analysis, "ptx")  # every line of the PTX text
    ptx_kinds = noise.classify("ptx", ptx_lines)
    if not ptx_kinds:
        pytest.skip("this tritonscope's PTX dialect marks no noise")
    assert "debug" in ptx_kinds.values()
    count = "(k => [...document.querySelectorAll('.pane[data-stage=ptx] .l.z-' + k)]" \
            ".filter(el => el.offsetHeight > 0).length)"
    folded = sum(1 for k in ptx_kinds.values() if k == "debug")
    assert browser.eval(f"{count}('debug')") == 0
    title = browser.eval("document.querySelector('.pane[data-stage=ptx] h2 .folded').innerText")
    assert title.startswith("hidden: ") and f"{folded:,} debug" in title, title
    # numbers are the stage's own: the DOM holds every line, in order, folded or not
    numbers = browser.eval("[...document.querySelectorAll('.pane[data-stage=ptx] .l .n')].map(n => +n.textContent)")
    assert numbers == [ln.number for ln in ptx_lines] == list(range(1, len(ptx_lines) + 1))
    shown = browser.eval("[...document.querySelectorAll('.pane[data-stage=ptx] .l')].filter(el => el.offsetHeight > 0)"
                         ".map(el => +el.querySelector('.n').textContent)")
    assert shown == [ln.number for ln in ptx_lines if ln.number not in ptx_kinds]
    browser.eval("document.querySelector('#toggles input[data-noise=debug]').click()")
    assert browser.eval(f"{count}('debug')") == folded
    # what a reader sees: the PTX alone, its DWARF sections unfolded (scrolled to the first of them)
    browser.eval("document.querySelector('.pane[data-stage=ptx] button[data-act=focus]').click()")
    browser.eval("(() => { const el = document.querySelector('.pane[data-stage=ptx] .l.z-debug:nth-last-child(60)');"
                 " const code = el.closest('.code'); code.scrollTop = el.offsetTop - 40;"
                 " document.getElementById('toggles').scrollIntoView(); })()")
    ARTIFACTS.mkdir(exist_ok=True)
    browser.screenshot(ARTIFACTS / "report_grouped_ptx_debug_shown.png")
    print(f"\nscreenshot: {ARTIFACTS / 'report_grouped_ptx_debug_shown.png'}")
    browser.eval("document.querySelector('.pane[data-stage=ptx] button[data-act=focus]').click()")
    title = browser.eval("document.querySelector('.pane[data-stage=ptx] h2 .folded').innerText")
    assert "debug" not in title and title.startswith("hidden: "), title  # the other kinds are still folded
    kinds = browser.eval("[...document.querySelectorAll('#toggles input[data-noise]')].map(b => b.dataset.noise)")
    for kind in kinds:  # everything shown: nothing left to say
        if kind != "debug":
            browser.eval(f"document.querySelector('#toggles input[data-noise={kind}]').click()")
    assert browser.eval("document.querySelector('.pane[data-stage=ptx] h2 .folded').offsetHeight") == 0
    numbers = browser.eval("[...document.querySelectorAll('.pane[data-stage=ptx] .l')].filter(el => el.offsetHeight > 0)"
                           ".map(el => +el.querySelector('.n').textContent)")
    assert numbers == list(range(1, len(ptx_lines) + 1))  # every line of the PTX, in order
    for kind in kinds:
        if kind != "debug":
            browser.eval(f"document.querySelector('#toggles input[data-noise={kind}]').click()")
    browser.eval("document.querySelector('#toggles input[data-noise=debug]').click()")
    assert browser.eval(f"{count}('debug')") == 0


def test_large_report_stays_usable(compiled, chromium, tmp_path):
    """About 5,000 lines per stage (the sm_90 grouped matmul's real lines, repeated): the page
    loads in seconds and a click highlights in well under a second."""
    from dataclasses import replace

    from tritonscope.analyses.analysis import analyze
    from tritonscope.core.model import Line, ParsedStage
    from tritonscope.outputs.save import save_report

    analysis = analyze(compiled("matmul_grouped"))
    big = {k: ParsedStage(k, tuple(Line(i + 1, ln.text, ln.raw, ln.loc) for i, ln in
                                   enumerate(list(s.lines) * (5000 // max(1, len(s.lines)) + 1))))
           if k != "python" else s for k, s in analysis.parsed.items()}
    analysis = replace(analysis, parsed=big)
    lines = sum(len(s.lines) for s in big.values())
    assert lines > 25000
    path = save_report(analysis, tmp_path / "big.html")
    browser = Browser(chromium, str(tmp_path / "profile"))
    try:
        started = time.monotonic()
        browser.open(path.resolve().as_uri())
        browser.eval("new Promise(r => { const f = () => document.body.dataset.ready ? r(1) : setTimeout(f, 20); f(); })")
        load = time.monotonic() - started
        py = _dot_line(analysis)
        # time the click handler and the layout it forces (reading offsetHeight)
        ms, lit = browser.eval(
            f"(() => {{ const el = document.querySelector('.pane[data-stage=\"python\"] .l[data-py=\"{py}\"]');"
            " const t = performance.now(); el.click(); document.body.offsetHeight;"
            " return [performance.now() - t, document.querySelectorAll('.l.hl').length]; })()")
        print(f"\n{lines} lines, {path.stat().st_size / 1e6:.1f} MB: loaded in {load:.2f} s, click {ms:.0f} ms, "
              f"{lit} lines highlighted")
        assert lit > 10
        assert load < 20, f"loading {lines} lines took {load:.1f} s"
        assert ms < 500, f"a click took {ms:.0f} ms"
    finally:
        browser.close()


def test_diff_page_loads_clean(compiled, chromium, tmp_path):
    """The side-by-side diff page: no console errors, no requests, both columns rendered."""
    from tritonscope.analyses.analysis import analyze
    from tritonscope.analyses.diff import diff_analyses
    from tritonscope.outputs.render.html import render_html_diff
    from tritonscope.core.output import write_atomic

    d = diff_analyses(analyze(compiled("matmul", block=16)), analyze(compiled("matmul", block=32)))
    path = write_atomic(tmp_path / "d.html", render_html_diff(d))
    browser = Browser(chromium, str(tmp_path / "profile"))
    try:
        browser.open(path.resolve().as_uri())
        bad = [ev for ev in browser.events if ev["method"] in ("Runtime.exceptionThrown", "Log.entryAdded")
               or (ev["method"] == "Runtime.consoleAPICalled" and ev["params"]["type"] == "error")]
        assert not bad, bad
        urls = [ev["params"]["request"]["url"] for ev in browser.events if ev["method"] == "Network.requestWillBeSent"]
        assert urls == [path.resolve().as_uri()]
        # the A text and the B text sit in two columns of equal width, side by side
        cols = browser.eval("(() => { const r = document.querySelector('table.sbs tr td.del').getBoundingClientRect();"
                            " const s = document.querySelector('table.sbs tr td.add').getBoundingClientRect();"
                            " return [r.left, r.width, s.left, s.width]; })()")
        assert cols[2] > cols[0] + cols[1] - 1 and abs(cols[1] - cols[3]) < 2, cols
        ARTIFACTS.mkdir(exist_ok=True)
        browser.eval("document.querySelector('h2[data-stage=ptx]').scrollIntoView()")
        browser.screenshot(ARTIFACTS / "diff_matmul_16_vs_32.png")
        print(f"\nscreenshot: {ARTIFACTS / 'diff_matmul_16_vs_32.png'}")
    finally:
        browser.close()


def test_remark_links_to_its_python_line(report_page):
    """Triton's remark (sm_90a, BLOCK 16: no MMA v3) is listed at the top; its place selects the tl.dot line."""
    browser, _, analysis = report_page
    py = _dot_line(analysis)
    assert [r["line"] for r in analysis.artifact.remarks if r["severity"] == "remark"] == [py]
    assert "MMA version 3 acceleration not applied" in browser.eval("document.getElementById('remarks').textContent")
    browser.eval("document.querySelector('#remarks button[data-py]').click()")
    assert browser.eval("document.querySelector('.pane[data-stage=\"python\"] .l.sel').dataset.py") == str(py)
    assert browser.eval("document.querySelectorAll('.pane[data-stage=\"python\"] .l.sel .note.k-remark').length") == 1
    assert browser.eval("document.querySelectorAll('.l.hl').length") > 1  # every stage's lines of it, as a click does
    browser.eval("document.dispatchEvent(new KeyboardEvent('keydown', {key: 'Escape'}))")
    assert browser.eval("document.querySelectorAll('.l.hl').length") == 0

#!/usr/bin/env python3
"""The web page in a real browser: build/web served as `python3 -m http.server` serves it (no
special headers: the page isolates itself through its service worker), opened in Debian's headless
Chromium, driven through the DevTools protocol and the page's test hook (window.paralens).

    python3 tests/web/test_page.py BUILD_WEB_DIR [REPO_ROOT] [-k NAME]

Exits 0 when every test passes, 1 when one fails, 77 (CTest's skip) with one line saying why when
there is no page or no Chromium. Screenshots of failures go to BUILD_WEB_DIR/../web-test-output.
"""

import base64
import gzip
import json
import os
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser import Browser, BrowserError, StaticServer, find_chromium, picture_stats  # noqa: E402

READY = "window.ParalensPage && ParalensPage.firstFrameMs !== null"


def press_keys(page, events):
    """Sends key events one by one, each after the page has drawn two frames since the last: ImGui
    1.86 reads key states once per frame, and a fixed pause (a tenth of a second) missed a press
    when software rendering took longer per frame. The app acts on presses only, so a long hold
    does not repeat them."""
    for kind, key in events:
        frames = page.evaluate("paralens.state().frames")
        page.send("Input.dispatchKeyEvent", dict(key, type=kind))
        page.wait_for("paralens.state().frames >= %d" % (frames + 2), timeout=10)


def settled(page, link_prefix=None, timeout=60):
    """The page's state once nothing runs, every experiment has its run and the link is current."""
    cond = ("(() => { if (!(%s)) return null; const s = paralens.state();"
            " return !s.busy && s.runs.length > 0 && (s.runs.length === s.experiments.length || s.experiments.some(e => e.kind === 'file'))"
            " && %s ? s : null; })()") % (READY, "s.link.startsWith(%s)" % json.dumps(link_prefix) if link_prefix else "true")
    try:
        state = page.wait_for(cond, timeout=timeout)
    except BrowserError as e:  # say what the page was doing
        try:
            now = page.evaluate("paralens.state()")
            now = {k: now.get(k) for k in ("frames", "link", "busy", "simulating", "fileJob", "error", "experiments", "runs")}
        except BrowserError as again:
            now = "unreadable: %s" % again
        raise BrowserError("%s; the page's state then: %s" % (e, json.dumps(now)[:1500]))
    frames = state["frames"]
    page.wait_for("paralens.state().frames >= %d || !paralens.state().busy" % (frames + 2), timeout=10)
    return page.evaluate("paralens.state()")


def drawn(page):
    png = page.send("Page.captureScreenshot", {"format": "png", "clip": {"x": 0, "y": 0, "width": 1280, "height": 700, "scale": 0.25}})
    return picture_stats(base64.b64decode(png["data"]))


class Suite:
    def __init__(self, web_dir, repo):
        self.web_dir, self.repo = web_dir, repo
        self.out_dir = os.path.join(os.path.dirname(os.path.abspath(web_dir)), "web-test-output")
        self.failures = []

    def open(self, browser, fragment=""):
        page = browser.open(self.server.url + "index.html" + fragment)
        page.wait_for(READY, timeout=90)
        return page

    def check(self, ok, what):
        if not ok:
            raise AssertionError(what)

    def no_errors(self, page):
        errors = [e for e in page.console_errors() if "favicon" not in e]
        errors += page.evaluate("ParalensPage.errors")
        self.check(not errors, "the page logged errors: %s" % errors[:5])

    # ---- the tests ----

    def test_every_scenario_draws(self, browser):
        """Each built-in scenario, opened by its link (then by changing the address's fragment),
        draws a canvas that is not blank, with a run for each experiment."""
        page = self.open(browser)
        scenarios = page.evaluate("paralens.state().scenarios")
        self.check(len(scenarios) >= 15, "the page lists %d scenarios" % len(scenarios))
        for i, name in enumerate(scenarios):
            if i > 0:
                page.evaluate("paralens.openLink(%s)" % json.dumps("scenario=" + name))
            else:
                page = self.open(browser, "#scenario=" + name)
            state = settled(page, "scenario=" + name)
            stats = drawn(page)
            print("    %-24s %2d runs, %4d colours, %4.0f%% drawn, frame built in %.1f ms, drawn in %.1f ms" %
                  (name, len(state["runs"]), stats["colours"], stats["drawnShare"] * 100, state["frameMs"]["build"], state["frameMs"]["draw"]))
            self.check(not state["linkProblems"], "%s: %s" % (name, state["linkProblems"]))
            self.check(state["link"] == "scenario=" + name, "%s: opening it changed it: %s" % (name, state["link"]))
            self.check(state["error"] == "", "%s: error dialog: %s" % (name, state["error"]))
            self.check(stats["colours"] >= 20 and stats["drawnShare"] > 0.05, "%s: the canvas looks blank: %s" % (name, stats))
            self.check(all(r["spans"] > 0 for r in state["runs"]), "%s: a run without spans" % name)
        self.no_errors(page)

    def test_every_tab_draws(self, browser):
        """Flow, Model, MFU, Stats, Auto-parallel and Planner, each on a scenario that has its data."""
        page = self.open(browser)
        settled(page)
        for scenario, tab in (("default", "flow"), ("ring-vs-tree", "model"), ("mfu-recompute", "mfu"), ("gpipe-vs-1f1b", "stats"),
                              ("autopar-transformer", "autopar"), ("plan-llama70b", "planner")):
            page.evaluate("paralens.openLink(%s)" % json.dumps("scenario=%s&view=%s" % (scenario, tab)))
            state = settled(page, "scenario=" + scenario)
            self.check(state["view"]["tab"] == tab, "%s: tab %s" % (scenario, state["view"]["tab"]))
            png = page.send("Page.captureScreenshot", {"format": "png", "clip": {"x": 280, "y": 420, "width": 1000, "height": 280, "scale": 0.5}})
            stats = picture_stats(base64.b64decode(png["data"]))
            print("    %-8s of %-22s %4d colours, %4.0f%% drawn" % (tab, scenario, stats["colours"], stats["drawnShare"] * 100))
            self.check(stats["colours"] >= 10 and stats["drawnShare"] > 0.03, "%s: the %s tab looks empty: %s" % (scenario, tab, stats))
            if tab == "planner":  # its pipelined rows too (the replay's ring check was undefined in a 32-bit build)
                rows = page.wait_for("(() => { const p = paralens.state().planner; return p && p.rows && p.rows.length > 0 ? p.rows : null; })()", timeout=60)
                configs = [r["config"] for r in rows]
                self.check(any(" pp 1 " not in c for c in configs), "%s: no pipelined row among %s" % (scenario, configs))
        self.no_errors(page)

    def test_link_restores_parameters(self, browser):
        """A lecturer's link opens that exact state, and the address bar holds its canonical form."""
        page = self.open(browser, "#scenario=ring-vs-tree&ranks=16&bytes=4MiB&view=model")
        state = settled(page, "scenario=ring-vs-tree")
        self.check([e["ranks"] for e in state["experiments"]] == [16, 16], "ranks: %s" % [e["ranks"] for e in state["experiments"]])
        self.check([e["bytes"] for e in state["experiments"]] == ["4MiB", "4MiB"], "bytes")
        self.check([e["algorithm"] for e in state["experiments"]] == ["ring", "tree"], "algorithms")
        self.check(state["view"]["tab"] == "model", "tab %s" % state["view"]["tab"])
        self.check(state["linkProblems"] == [], str(state["linkProblems"]))
        self.check("16 ranks" in state["runs"][0]["title"] or "16" in state["runs"][0]["title"], state["runs"][0]["title"])
        hash_ = page.evaluate("location.hash")
        self.check(hash_ == "#scenario=ring-vs-tree&bytes=4MiB&ranks=16", "address bar: " + hash_)  # model is the scenario's own tab
        self.no_errors(page)

    def test_bad_link_is_named_and_skipped(self, browser):
        page = self.open(browser, "#scenario=ring-vs-tree&colour=blue&ranks=abc&bytes=1MiB")
        state = settled(page, "scenario=ring-vs-tree")
        problems = state["linkProblems"]
        self.check(len(problems) == 2, "problems: %s" % problems)
        self.check(any("colour=blue" in p for p in problems) and any("ranks=abc" in p for p in problems), str(problems))
        self.check([e["bytes"] for e in state["experiments"]] == ["1MiB", "1MiB"], "the rest applies")
        self.check(drawn(page)["colours"] >= 20, "drawn")

    def test_key_press_updates_the_address(self, browser):
        """A change made in the window (C: the critical path) is in the address bar at once."""
        page = self.open(browser, "#scenario=gpipe-vs-1f1b")
        settled(page, "scenario=gpipe-vs-1f1b")
        page.mouse("mouseMoved", 800, 200)
        press_keys(page, [("rawKeyDown", {"key": "c", "code": "KeyC", "windowsVirtualKeyCode": 67}),
                          ("keyUp", {"key": "c", "code": "KeyC", "windowsVirtualKeyCode": 67})])
        page.wait_for("location.hash.includes('showCriticalPath=true')", timeout=10)
        self.check(page.evaluate("paralens.state().view.showCriticalPath"), "critical path shown")

    def test_wheel_and_pinch_zoom_the_timeline(self, browser):
        page = self.open(browser, "#scenario=gpipe-vs-1f1b")
        state = settled(page, "scenario=gpipe-vs-1f1b")
        before = state["layout"]["sections"][0]
        span = lambda s: s["windowEndNs"] - s["windowBeginNs"]  # noqa: E731
        page.mouse("mouseMoved", 800, 150)
        page.mouse("mouseWheel", 800, 150, deltaX=0, deltaY=-300)  # three notches up: zoom in
        page.wait_for("(() => { const s = paralens.state().layout.sections[0]; return s.windowEndNs - s.windowBeginNs < %f; })()"
                      % (span(before) * 0.9), timeout=10)
        mid = page.evaluate("paralens.state().layout.sections[0]")
        page.mouse("mouseWheel", 800, 150, deltaX=0, deltaY=-20, modifiers=2)  # a touchpad pinch: ctrl + wheel
        page.wait_for("(() => { const s = paralens.state().layout.sections[0]; return s.windowEndNs - s.windowBeginNs < %f; })()"
                      % (span(mid) * 0.99), timeout=10)
        self.check(page.evaluate("window.visualViewport.scale") == 1, "the page itself was zoomed")

    def test_files_are_read_and_analysed(self, browser):
        """A trace, the same gzipped, and an nccl-tests log set on the file input: read, parsed on a
        worker, shown, analysed; reference data from ../shared when it is there."""
        page = self.open(browser)
        settled(page)
        tmp = tempfile.mkdtemp(prefix="paralens-web-")
        trace = os.path.join(self.repo, "traces", "sim-gpipe-4stages-8mb.json")
        gz = os.path.join(tmp, "gpipe.json.gz")
        with open(trace, "rb") as f, gzip.open(gz, "wb") as g:
            g.write(f.read())
        log = os.path.join(tmp, "all_reduce_perf.log")
        with open(log, "w") as f:
            f.write(NCCL_LOG)
        cases = [([trace], "sim-gpipe-4stages-8mb.json", 4), ([gz], "gpipe.json.gz", 4), ([log], "all_reduce_perf.log", 1)]
        shared = os.path.join(self.repo, "..", "shared", "reference-data")
        if os.path.isdir(shared):
            cases.append(([os.path.join(shared, "kineto", "sampled_rank-0.json.gz"), os.path.join(shared, "kineto", "sampled_rank-1.json.gz")],
                          "2 trace files", 2))
            cases.append(([os.path.join(shared, "nsys", "saxpy-mpi-cuda-a100.sqlite")], "saxpy-mpi-cuda-a100.sqlite", 1))
        else:
            print("    (../shared/reference-data absent: the real Kineto and Nsight files are skipped)")
        for paths, title, min_devices in cases:
            page.set_files("#file-input", paths)
            state = page.wait_for("(() => { const s = paralens.state(); return !s.busy && s.title.includes(%s) ? s : null; })()"
                                  % json.dumps(title), timeout=120)
            devices = sum(r["devices"] for r in state["runs"])
            print("    %-40s %d run(s), %d devices, %d spans" % (title, len(state["runs"]), devices, sum(r["spans"] for r in state["runs"])))
            self.check(state["error"] == "", "%s: %s" % (title, state["error"]))
            self.check(devices >= min_devices, "%s: %d devices" % (title, devices))
            self.check(state["view"]["tab"] == "stats", "opened files show the Stats tab")
        self.check(drawn(page)["colours"] >= 20, "drawn")
        self.no_errors(page)

    def test_dropped_file_opens(self, browser):
        """A trace dragged from the desktop and dropped on the canvas opens as if picked."""
        page = self.open(browser)
        settled(page)
        trace = os.path.join(self.repo, "traces", "sim-allreduce-ring-8ranks.json")
        data = {"items": [], "files": [os.path.abspath(trace)], "dragOperationsMask": 1}
        for kind in ("dragEnter", "dragOver", "drop"):
            page.send("Input.dispatchDragEvent", {"type": kind, "x": 700, "y": 300, "data": data})
        state = page.wait_for("(() => { const s = paralens.state(); return !s.busy && s.title.includes('sim-allreduce-ring-8ranks') ? s : null; })()",
                              timeout=60)
        self.check(state["runs"][0]["devices"] == 8, "8 ranks: %s" % state["runs"])
        self.check(page.evaluate("document.getElementById('dropzone').hidden"), "the drop hint is gone")
        self.no_errors(page)

    def test_canvas_follows_the_window(self, browser):
        page = self.open(browser, "#scenario=default")
        settled(page, "scenario=default")
        # The last: a window as large as its screen (F11 at devicePixelRatio 1), which emscripten's GLFW
        # would take for a request of fullscreen and never resize to.
        for width, height, screen in ((900, 600, False), (1400, 850, False), (1024, 700, True)):
            metrics = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}
            if screen:
                metrics.update(screenWidth=width, screenHeight=height)
            page.send("Emulation.setDeviceMetricsOverride", metrics)
            page.wait_for("(() => { const c = paralens.state().canvas; return c[0] === %d && c[1] === %d; })()" % (width, height), timeout=10)
        self.check(drawn(page)["colours"] >= 20, "drawn after the resize")

    def test_whatif_replays_an_opened_trace(self, browser):
        """What-if replay under an opened trace: the file read again on a worker, replayed with its
        first change (communication twice as fast), drawn under it and compared in the Stats tab."""
        page = self.open(browser)
        settled(page)
        trace = os.path.join(self.repo, "traces", "sim-dp-4workers-straggler.json")
        page.set_files("#file-input", [trace])
        state = page.wait_for("(() => { const s = paralens.state(); return !s.busy && s.title.includes('sim-dp-4workers') ? s : null; })()", timeout=60)
        x, y, w, h = page.wait_for("paralens.state().layout.whatIfButton", timeout=10)
        page.mouse("mouseMoved", x + w / 2, y + h / 2)
        time.sleep(0.1)
        page.mouse("mousePressed", x + w / 2, y + h / 2, button="left", clickCount=1)
        time.sleep(0.05)
        page.mouse("mouseReleased", x + w / 2, y + h / 2, button="left", clickCount=1)
        state = page.wait_for("(() => { const s = paralens.state(); return !s.busy && s.runs.length === 2 ? s : null; })()", timeout=60)
        kinds = [r["kind"] for r in state["runs"]]
        self.check(kinds == ["file", "whatif"], "runs: %s" % kinds)
        self.check(state["runs"][1]["spans"] > 0 and state["error"] == "", "the replay: %s %s" % (state["runs"][1], state["error"]))
        self.check(state["view"]["showCriticalPath"], "the critical path is outlined")
        self.no_errors(page)

    def test_bad_and_large_files_are_refused(self, browser):
        page = self.open(browser)
        settled(page)
        tmp = tempfile.mkdtemp(prefix="paralens-web-")
        bad = os.path.join(tmp, "broken.json")
        with open(bad, "w") as f:
            f.write('{"traceEvents": [{"ph": "X", "ts": 1, "dur": ')
        page.set_files("#file-input", [bad])
        message = page.wait_for("paralens.state().error", timeout=60)
        self.check("broken.json" in message, "the error names the file: " + message)
        big = os.path.join(tmp, "huge.json")
        with open(big, "wb") as f:  # sparse: 600 MB that take no disk
            f.truncate(600 * 1024 * 1024)
        page.set_files("#file-input", [big])
        toast = page.wait_for("!document.getElementById('toast').hidden && document.getElementById('toast').textContent", timeout=10)
        self.check("more than the page opens" in toast, toast)
        self.check(page.evaluate("ParalensPage.errors.pop()").startswith("too large"), "recorded")

    def test_exports_are_downloads(self, browser):
        """File > Export the timeline as PNG and Save the trace: the browser gets them as downloads."""
        page = self.open(browser, "#scenario=ring-vs-tree")
        settled(page, "scenario=ring-vs-tree")
        for item in ("Export the timeline as PNG...", "Save the selected run's trace as..."):
            count = page.evaluate("ParalensPage.downloads.length")
            self.click_menu(page, "File", item)
            page.wait_for("ParalensPage.downloads.length > %d" % count, timeout=20)
        downloads = page.evaluate("ParalensPage.downloads")
        names = [d["name"] for d in downloads]
        self.check(names == ["timeline.png", "trace.json"], str(downloads))
        self.check(all(d["bytes"] > 1000 for d in downloads), str(downloads))
        self.no_errors(page)

    def test_open_uses_the_browsers_file_picker(self, browser):
        """File > Open trace... and Ctrl+O open the browser's own file chooser."""
        page = self.open(browser)
        settled(page)
        page.send("Page.setInterceptFileChooserDialog", {"enabled": True})
        self.click_menu(page, "File", "Open trace...")
        self.wait_event(page, "Page.fileChooserOpened")
        page.mouse("mouseMoved", 800, 300)
        control = {"key": "Control", "code": "ControlLeft", "windowsVirtualKeyCode": 17}
        o = {"key": "o", "code": "KeyO", "windowsVirtualKeyCode": 79, "modifiers": 2}
        press_keys(page, [(kind, dict(key, modifiers=2 if kind == "rawKeyDown" or key is o else 0))  # as a keyboard sends them
                          for kind, key in (("rawKeyDown", control), ("rawKeyDown", o), ("keyUp", o), ("keyUp", control))])
        self.wait_event(page, "Page.fileChooserOpened", count=2)
        self.no_errors(page)

    def wait_event(self, page, method, count=1, timeout=10):
        deadline = time.time() + timeout
        while time.time() < deadline:
            with page.browser.lock:
                seen = sum(1 for e in page.browser.events if e.get("sessionId") == page.session and e["method"] == method)
            if seen >= count:
                return
            time.sleep(0.05)
        raise AssertionError("no %s (%d wanted) in %d s" % (method, count, timeout))

    def test_desktop_only_backends_are_greyed(self, browser):
        page = self.open(browser, "#scenario=live-ring-processes")
        state = settled(page, "scenario=live-ring-processes")
        for backend, why in state["backends"].items():
            self.check(why.startswith("desktop app only"), "%s: %s" % (backend, why))
        self.check(drawn(page)["colours"] >= 20, "the simulator's prediction is drawn")

    def test_device_pixel_ratio(self, browser_2x):
        page = self.open(browser_2x, "#scenario=default")
        state = settled(page, "scenario=default")
        css = page.evaluate("[document.getElementById('canvas').clientWidth, document.getElementById('canvas').clientHeight]")
        self.check(state["scale"] == 2, "scale %s" % state["scale"])
        self.check(state["canvas"] == [css[0] * 2, css[1] * 2], "canvas %s for CSS %s" % (state["canvas"], css))

    def test_crash_shows_reload(self, browser):
        """An exception escaping the module shows a message and a Reload button, not a frozen canvas."""
        page = self.open(browser)
        settled(page)
        page.evaluate("setTimeout(() => Module.ccall('paralens_open_files', null, ['string'], ['{not json']), 0); true")
        page.wait_for("!document.getElementById('crash').hidden", timeout=10)
        self.check("Reload" in page.evaluate("document.getElementById('crash').innerText"), "a Reload button")

    def click_menu(self, page, menu, item):
        """Clicks a menu of the window and one of its items, found by the page's layout report."""
        menus = page.evaluate("paralens.state().layout.menus")
        x, y = menus[menu]
        page.mouse("mouseMoved", x, y)
        page.mouse("mousePressed", x, y, button="left", clickCount=1)
        time.sleep(0.05)
        page.mouse("mouseReleased", x, y, button="left", clickCount=1)
        items = page.wait_for("paralens.state().layout.menuItems[%s]" % json.dumps(item), timeout=10)
        page.mouse("mouseMoved", items[0], items[1])
        time.sleep(0.1)
        page.mouse("mousePressed", items[0], items[1], button="left", clickCount=1)
        time.sleep(0.05)
        page.mouse("mouseReleased", items[0], items[1], button="left", clickCount=1)

    def run(self, only=None):
        tests = [name for name in dir(self) if name.startswith("test_") and (not only or only in name)]
        os.makedirs(self.out_dir, exist_ok=True)
        with StaticServer(self.web_dir) as self.server, Browser() as browser, Browser(scale=2) as browser_2x:
            for name in tests:
                start = time.time()
                fn = getattr(self, name)
                page_count = len(browser.send("Target.getTargets")["targetInfos"])
                try:
                    fn(browser_2x if "browser_2x" in fn.__code__.co_varnames[:2] else browser)
                    print("PASS %s (%.1f s)" % (name, time.time() - start))
                except (AssertionError, BrowserError) as e:
                    self.failures.append(name)
                    print("FAIL %s: %s" % (name, e))
                    traceback.print_exc(limit=2)
                finally:
                    for info in browser.send("Target.getTargets")["targetInfos"][page_count - 1:]:
                        if info["type"] == "page" and info["url"].startswith(self.server.url):
                            try:
                                browser.send("Target.closeTarget", {"targetId": info["targetId"]})
                            except BrowserError:
                                pass
        print("%d of %d web tests passed" % (len(tests) - len(self.failures), len(tests)))
        return 1 if self.failures else 0


NCCL_LOG = """# nThread 1 nGpus 1 minBytes 8 maxBytes 1048576 step: 4(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid   1001 on   gpu-node device  0 [0x07] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid   1002 on   gpu-node device  1 [0x08] NVIDIA H100 80GB HBM3
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
           8             2     float     sum      -1    10.10    0.00    0.00      0    10.00    0.00    0.00      0
          32             8     float     sum      -1    10.20    0.00    0.00      0    10.10    0.00    0.00      0
         128            32     float     sum      -1    10.30    0.01    0.01      0    10.20    0.01    0.01      0
         512           128     float     sum      -1    10.50    0.05    0.05      0    10.40    0.05    0.05      0
        2048           512     float     sum      -1    11.00    0.19    0.19      0    10.90    0.19    0.19      0
        8192          2048     float     sum      -1    12.00    0.68    0.68      0    11.90    0.69    0.69      0
       32768          8192     float     sum      -1    14.00    2.34    2.34      0    13.90    2.36    2.36      0
      131072         32768     float     sum      -1    20.00    6.55    6.55      0    19.90    6.59    6.59      0
      524288        131072     float     sum      -1    40.00   13.11   13.11      0    39.90   13.14   13.14      0
     1048576        262144     float     sum      -1    60.00   17.48   17.48      0    59.90   17.51   17.51      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 4.0
#
"""


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("-k")]
    only = None
    if "-k" in sys.argv:
        only = sys.argv[sys.argv.index("-k") + 1]
        args = [a for a in args if a != only]
    web_dir = args[0] if args else "build/web"
    repo = args[1] if len(args) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    if not os.path.isfile(os.path.join(web_dir, "paralens.wasm")):
        print("SKIP: %s has no paralens.wasm (build the page: cmake --preset web && cmake --build --preset web)" % web_dir)
        return 77
    if not find_chromium():
        print("SKIP: no Chromium here (Debian package chromium; scripts/install-deps-web.sh installs it)")
        return 77
    return Suite(web_dir, repo).run(only)


if __name__ == "__main__":
    sys.exit(main())

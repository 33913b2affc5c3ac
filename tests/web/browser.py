"""Headless Chromium driven through the DevTools protocol over a pipe (--remote-debugging-pipe),
with Python's standard library only, and a static server for the page: what the web page's tests
and benchmark use (tests/web/test_page.py, tests/bench/bench_web.py).

    with StaticServer(folder) as server, Browser() as browser:
        page = browser.open(server.url + "index.html#scenario=ring-vs-tree")
        page.wait_for("window.paralens && window.ParalensPage.firstFrameMs !== null")
        state = page.evaluate("paralens.state()")
        png = page.screenshot()
"""

import base64
import functools
import http.server
import json
import os
import shutil
import socketserver
import struct
import subprocess
import tempfile
import threading
import time
import zlib


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Quiet(http.server.SimpleHTTPRequestHandler):
    extensions_map = dict(http.server.SimpleHTTPRequestHandler.extensions_map, **{".wasm": "application/wasm", ".js": "text/javascript"})

    def log_message(self, *args):
        pass


class StaticServer:
    """The folder on http://127.0.0.1:PORT/ as `python3 -m http.server` serves it (no special headers)."""

    def __init__(self, folder):
        handler = functools.partial(Quiet, directory=folder)
        socketserver.ThreadingTCPServer.allow_reuse_address = True
        self.httpd = socketserver.ThreadingTCPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.url = "http://127.0.0.1:%d/" % self.httpd.server_address[1]

    def __enter__(self):
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


class BrowserError(Exception):
    pass


class Browser:
    """One headless Chromium with a fresh profile. WebGL2 through SwiftShader."""

    def __init__(self, width=1280, height=800, scale=1.0, extra_args=()):
        self.chromium = find_chromium()
        if not self.chromium:
            raise BrowserError("chromium not found (Debian package chromium; scripts/install-deps-web.sh installs it)")
        self.profile = tempfile.mkdtemp(prefix="paralens-chromium-")
        self.args = [self.chromium, "--headless=new", "--no-sandbox", "--remote-debugging-pipe",
                     "--enable-unsafe-swiftshader", "--use-angle=swiftshader", "--ignore-gpu-blocklist",
                     "--no-first-run", "--no-default-browser-check", "--disable-background-networking",
                     "--disable-component-update", "--disable-sync", "--disable-quic", "--disable-extensions",
                     "--disable-dev-shm-usage", "--user-data-dir=" + self.profile,
                     "--window-size=%d,%d" % (width, height), "--force-device-scale-factor=%g" % scale] + list(extra_args) + ["about:blank"]
        self.next_id = 0
        self.pending = {}
        self.events = []
        self.lock = threading.Condition()
        self.closed = False

    def __enter__(self):
        to_chrome_r, self.to_chrome = os.pipe()
        self.from_chrome, from_chrome_w = os.pipe()

        def child_fds():  # the child reads commands on fd 3 and writes answers on fd 4 (run before close_fds)
            a, b = os.dup(to_chrome_r), os.dup(from_chrome_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(self.args, preexec_fn=child_fds, pass_fds=(3, 4, to_chrome_r, from_chrome_w),  # 3 and 4 kept: made by child_fds
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        self.stderr_tail = []
        return self

    def __exit__(self, *exc):
        try:
            self.send("Browser.close", timeout=5)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        os.close(self.to_chrome)
        shutil.rmtree(self.profile, ignore_errors=True)

    def _drain_stderr(self):
        for line in self.proc.stderr:
            self.stderr_tail = (self.stderr_tail + [line.decode(errors="replace").rstrip()])[-40:]

    def _read(self):
        buf = b""
        while True:
            chunk = os.read(self.from_chrome, 1 << 20)
            if not chunk:
                break
            buf += chunk
            while b"\0" in buf:
                raw, buf = buf.split(b"\0", 1)
                msg = json.loads(raw)
                with self.lock:
                    if "id" in msg:
                        self.pending[msg["id"]] = msg
                    else:
                        self.events.append(msg)
                    self.lock.notify_all()
        with self.lock:
            self.closed = True
            self.lock.notify_all()

    def send(self, method, params=None, session=None, timeout=60):
        with self.lock:
            self.next_id += 1
            mid = self.next_id
        msg = {"id": mid, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.to_chrome, json.dumps(msg).encode() + b"\0")
        deadline = time.time() + timeout
        with self.lock:
            while mid not in self.pending:
                if self.closed:
                    raise BrowserError("chromium exited: " + " | ".join(self.stderr_tail[-5:]))
                left = deadline - time.time()
                if left <= 0:
                    raise BrowserError("no answer to %s in %d s" % (method, timeout))
                self.lock.wait(left)
            answer = self.pending.pop(mid)
        if "error" in answer:
            raise BrowserError("%s: %s" % (method, answer["error"].get("message")))
        return answer.get("result", {})

    def open(self, url):
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, session)
        for domain in ("Page", "Runtime", "Log"):
            page.send(domain + ".enable")
        page.send("Page.navigate", {"url": url})
        return page


class Page:
    def __init__(self, browser, session):
        self.browser = browser
        self.session = session

    def send(self, method, params=None, timeout=60):
        return self.browser.send(method, params, self.session, timeout)

    def evaluate(self, expression, timeout=60):
        result = self.send("Runtime.evaluate", {"expression": expression, "awaitPromise": True, "returnByValue": True}, timeout)
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            raise BrowserError("%s: %s" % (expression[:80], details.get("exception", {}).get("description", details.get("text"))))
        return result.get("result", {}).get("value")

    def wait_for(self, expression, timeout=60, poll=0.1):
        deadline = time.time() + timeout
        while True:
            try:
                value = self.evaluate(expression)
            except BrowserError:
                value = None  # the page is reloading (its service worker) or not ready yet
            if value:
                return value
            if time.time() > deadline:
                raise BrowserError("timed out after %d s waiting for %s" % (timeout, expression))
            time.sleep(poll)

    def console_errors(self):
        """Errors the page logged or threw: console.error, uncaught exceptions, browser log errors."""
        out = []
        with self.browser.lock:
            events = [e for e in self.browser.events if e.get("sessionId") == self.session]
        for e in events:
            p = e.get("params", {})
            if e["method"] == "Runtime.exceptionThrown":
                out.append("exception: " + p["exceptionDetails"].get("exception", {}).get("description", p["exceptionDetails"].get("text", "")))
            elif e["method"] == "Runtime.consoleAPICalled" and p.get("type") == "error":
                out.append("console.error: " + " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", [])))
            elif e["method"] == "Log.entryAdded" and p["entry"].get("level") == "error":
                out.append("log: " + p["entry"].get("text", "") + " " + p["entry"].get("url", ""))
        return out

    def screenshot(self):
        return base64.b64decode(self.send("Page.captureScreenshot", {"format": "png"})["data"])

    def set_files(self, selector, paths):
        doc = self.send("DOM.getDocument")
        node = self.send("DOM.querySelector", {"nodeId": doc["root"]["nodeId"], "selector": selector})["nodeId"]
        self.send("DOM.setFileInputFiles", {"files": [os.path.abspath(p) for p in paths], "nodeId": node})

    def mouse(self, kind, x, y, **extra):
        params = {"type": kind, "x": x, "y": y}
        params.update(extra)
        self.send("Input.dispatchMouseEvent", params)


def decode_png(data):
    """(width, height, rows of RGBA bytes) of an 8-bit RGB or RGBA PNG, as Chromium writes them."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and color in (2, 6), "only 8-bit RGB(A) PNGs"
            channels = 4 if color == 6 else 3
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b, c = prev[i], prev[i - channels] if i >= channels else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line) if channels == 4 else bytes(v for px in range(width) for v in (*line[px * 3:px * 3 + 3], 255)))
        prev = line
    return width, height, rows


def picture_stats(png):
    """How much of a screenshot is drawn: distinct colours and the share of pixels unlike the most common one."""
    width, height, rows = decode_png(png)
    counts = {}
    for row in rows[::4]:
        for x in range(0, width * 4, 16):
            px = row[x:x + 3]
            counts[px] = counts.get(px, 0) + 1
    total = sum(counts.values())
    background = max(counts.values())
    return {"width": width, "height": height, "colours": len(counts), "drawnShare": 1.0 - background / total}

#!/usr/bin/env python3
"""A screenshot of the web page in headless Chromium, for the README:

    python3 tests/web/screenshot.py build/web OUT.png ['#scenario=...'] [WIDTHxHEIGHT]
"""
import base64
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser import Browser, StaticServer  # noqa: E402


def main():
    web_dir, out = sys.argv[1], sys.argv[2]
    fragment = sys.argv[3] if len(sys.argv) > 3 else ""
    width, height = (int(v) for v in (sys.argv[4] if len(sys.argv) > 4 else "1440x900").split("x"))
    with StaticServer(web_dir) as server, Browser(width=width, height=height) as browser:
        page = browser.open(server.url + "index.html" + fragment)
        page.wait_for("window.ParalensPage && ParalensPage.firstFrameMs !== null && !paralens.state().busy", timeout=120)
        page.send("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        page.wait_for("(() => { const c = paralens.state().canvas, e = document.getElementById('canvas');"
                      " return c[0] === e.clientWidth && c[1] === e.clientHeight; })()")  # the canvas has followed
        page.wait_for("!paralens.state().busy")
        page.mouse("mouseMoved", width - 2, height - 2)
        time.sleep(0.5)
        with open(out + ".tmp", "wb") as f:
            f.write(base64.b64decode(page.send("Page.captureScreenshot", {"format": "png"})["data"]))
        os.replace(out + ".tmp", out)
        print("wrote %s (%dx%d, %s)" % (out, width, height, page.evaluate("location.hash")))


if __name__ == "__main__":
    main()

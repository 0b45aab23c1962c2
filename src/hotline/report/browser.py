"""A page as a real browser renders it: headless Chromium (Debian's
`chromium`), driven over the DevTools protocol (websocket-client), reports
what the rendered page holds (the images and whether each loaded, the
tables, the section titles, how far it is wider than the window) and takes
a screenshot of it.

Chromium runs with a fresh profile and everything that would reach the
network turned off: on a machine without network it otherwise stalls on
its background connections.  As root it needs --no-sandbox.
"""

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from hotline.errors import HotlineError
from hotline.inputs import read_text

# The width pages are read and checked at: a laptop's browser window.
WIDTH = 1400
FLAGS = ["--headless", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-extensions",
         "--disable-default-apps", "--hide-scrollbars", "--remote-debugging-port=0",
         f"--window-size={WIDTH},1000"]
START_S = 60            # for Chromium to open its DevTools port
LOAD_S = 60             # for a page to finish loading
SCREENSHOT_HEIGHT = 16000   # the tallest screenshot taken (pixels; Chromium's own limit is 16384)
                            # (a taller page is taken in several: screenshot_parts())

# What the page holds once loaded, every image decoded first.
_INSPECT = """Promise.all([...document.images].map(i => i.decode().catch(() => null)))
.then(() => JSON.stringify({
  title: document.title,
  images: [...document.images].map(i => ({alt: i.alt, complete: i.complete,
                                          width: i.naturalWidth, height: i.naturalHeight})),
  tables: document.querySelectorAll("table").length,
  rows: document.querySelectorAll("tr").length,
  headings: [...document.querySelectorAll("h1, h2")].map(h => h.textContent.trim()),
  overflow: Math.max(0, document.documentElement.scrollWidth - window.innerWidth),
  text: document.body ? document.body.innerText : ""}))"""


def chromium() -> str | None:
    """The Chromium binary, if installed."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


@dataclass
class Image:
    alt: str
    complete: bool
    width: int
    height: int

    @property
    def loaded(self) -> bool:
        return self.complete and self.width > 0 and self.height > 0


@dataclass
class Rendered:
    title: str
    images: list[Image]
    tables: int
    rows: int
    headings: list[str]
    overflow: int               # pixels the page is wider than the window (0: none)
    text: str
    screenshots: list[Path]     # the whole page, top to bottom (screenshot_parts())
    height: int = 0             # the page's height in pixels, if a screenshot was taken

    @property
    def screenshot(self) -> Path | None:
        return self.screenshots[0] if self.screenshots else None


def screenshot_parts(path: Path, height: int) -> list[tuple[Path, int, int]]:
    """Where a screenshot of a page `height` pixels tall goes: (file, top,
    height) of each part of at most SCREENSHOT_HEIGHT pixels, the first in
    `path`, the others beside it as NAME-2.png, NAME-3.png, ..."""
    tops = range(0, max(height, 1), SCREENSHOT_HEIGHT)
    return [(path if n == 1 else path.with_name(f"{path.stem}-{n}{path.suffix}"), top,
             min(SCREENSHOT_HEIGHT, height - top) if height else 1)
            for n, top in enumerate(tops, start=1)]


def _stale_parts(path: Path, kept: int) -> list[Path]:
    """Parts of an earlier, taller screenshot of the same page."""
    n, stale = kept + 1, []
    while (part := path.with_name(f"{path.stem}-{n}{path.suffix}")).is_file():
        stale.append(part)
        n += 1
    return stale


class Browser:
    """One headless Chromium, for as long as the `with` lasts."""

    def __init__(self):
        binary = chromium()
        if binary is None:
            raise HotlineError("chromium is not installed (scripts/apt-packages.txt lists it; "
                               "./hotline test installs it)")
        self.profile = Path(tempfile.mkdtemp(prefix="hotline-chromium-"))
        flags = [*FLAGS, f"--user-data-dir={self.profile}"]
        if os.geteuid() == 0:
            flags.append("--no-sandbox")
        self.log = open(self.profile.parent / f"{self.profile.name}.log", "w")
        self.process = subprocess.Popen([binary, *flags, "about:blank"], stdin=subprocess.DEVNULL,
                                        stdout=self.log, stderr=subprocess.STDOUT)
        self._id = 0
        self.socket = None
        try:
            self.port = self._port()
        except BaseException:
            self.close()
            raise

    def _port(self) -> int:
        active = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + START_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise HotlineError(f"chromium exited with status {self.process.returncode} "
                                   f"before opening its DevTools port (log: {self.log.name})")
            if active.is_file() and read_text(active).strip():
                return int(read_text(active).split()[0])
            time.sleep(0.2)
        raise HotlineError(f"chromium opened no DevTools port in {START_S} s (log: "
                           f"{self.log.name})")

    def _page_socket(self):
        import websocket
        # Straight to localhost: no proxy from the environment.
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(f"http://127.0.0.1:{self.port}/json/list", timeout=10) as r:
            targets = json.load(r)
        page = next(t for t in targets if t["type"] == "page")
        # suppress_origin: Chromium refuses DevTools connections that send an Origin.
        return websocket.create_connection(page["webSocketDebuggerUrl"], timeout=LOAD_S,
                                           suppress_origin=True)

    def call(self, method: str, **params) -> dict:
        """One DevTools command; its result (events in between are skipped)."""
        if self.socket is None:
            self.socket = self._page_socket()
        self._id += 1
        self.socket.send(json.dumps({"id": self._id, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv())
            if message.get("id") == self._id:
                if "error" in message:
                    raise HotlineError(f"chromium: {method}: {message['error'].get('message')}")
                return message.get("result", {})

    def render(self, page: Path, screenshot: Path | None = None) -> Rendered:
        """Load a page, wait until it has loaded, and say what it holds;
        with screenshot, write a PNG of the whole page there, in parts of
        at most SCREENSHOT_HEIGHT pixels where it is taller
        (screenshot_parts())."""
        self.call("Page.enable")
        self.call("Page.navigate", url=page.resolve().as_uri())
        deadline = time.monotonic() + LOAD_S
        while self._evaluate("document.readyState") != "complete":
            if time.monotonic() > deadline:
                raise HotlineError(f"{page}: not loaded after {LOAD_S} s in chromium")
            time.sleep(0.2)
        facts = json.loads(self._evaluate(_INSPECT, wait=True))
        shots, height = [], 0
        if screenshot is not None:
            size = self.call("Page.getLayoutMetrics")["cssContentSize"]
            height = int(size["height"])
            parts = screenshot_parts(screenshot, height)
            for path, top, part_height in parts:
                shot = self.call("Page.captureScreenshot", format="png",
                                 captureBeyondViewport=True,
                                 clip={"x": 0, "y": top, "width": int(size["width"]),
                                       "height": part_height, "scale": 1})
                path.write_bytes(base64.b64decode(shot["data"]))
                shots.append(path)
            for stale in _stale_parts(screenshot, len(parts)):
                stale.unlink()
        return Rendered(facts["title"], [Image(**i) for i in facts["images"]], facts["tables"],
                        facts["rows"], facts["headings"], facts["overflow"], facts["text"],
                        shots, height)

    def _evaluate(self, expression: str, wait: bool = False):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True,
                           awaitPromise=wait)
        if "exceptionDetails" in result:
            raise HotlineError(f"chromium: the page's script failed: "
                               f"{result['exceptionDetails'].get('text')}")
        return result["result"].get("value")

    def close(self) -> None:
        if self.socket is not None:
            self.socket.close()
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()
        shutil.rmtree(self.profile, ignore_errors=True)
        Path(self.log.name).unlink(missing_ok=True)

    def __enter__(self) -> "Browser":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def summary(page: Path, shown: Rendered) -> str:
    """One line on what Chromium showed of a page: its pictures that loaded,
    its tables, and the screenshot files that hold the whole page."""
    loaded = sum(i.loaded for i in shown.images)
    line = (f"{page.name} in Chromium: {loaded} of {len(shown.images)} pictures loaded, "
            f"{shown.tables} tables")
    if shown.overflow:
        line += f", {shown.overflow:,} px wider than the {WIDTH:,}-px window"
    if len(shown.screenshots) == 1:
        return f"{line}; screenshot {shown.screenshots[0]}"
    if shown.screenshots:
        return (f"{line}; the page is {shown.height:,} pixels tall, so its screenshot is in "
                f"{len(shown.screenshots)} parts of at most {SCREENSHOT_HEIGHT:,}: "
                f"{', '.join(str(p) for p in shown.screenshots)}")
    return line


def render(page: Path, screenshot: Path | None = None) -> Rendered:
    """One page in a browser of its own."""
    with Browser() as browser:
        return browser.render(page, screenshot)

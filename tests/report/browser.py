"""Opening a page in headless Chromium and watching it through the DevTools protocol over
a pipe (``--remote-debugging-pipe``: JSON messages ending in NUL on the browser's file
descriptors 3 and 4; no port, no WebSocket library): what the console and the page's
scripts reported, what the page fetched, how many canvases its (shadow) DOM holds once
its scripts ran, and a screenshot."""

from __future__ import annotations

import base64
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: The flags the machine's notes give for a headless Chromium, and no name resolution at
#: all, so a page that tried to fetch anything from the network would fail loudly.
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--host-resolver-rules=MAP * ~NOTFOUND", "--hide-scrollbars"]

#: Counts the canvases in the page, inside shadow roots too (Bokeh draws in them).
COUNT_CANVASES = """(() => {
  let n = 0;
  const walk = (root) => {
    for (const el of root.querySelectorAll('*')) {
      if (el.tagName === 'CANVAS' && el.width > 0 && el.height > 0) n++;
      if (el.shadowRoot) walk(el.shadowRoot);
    }
  };
  walk(document);
  return n;
})()"""


def chromium() -> str | None:
    """The Chromium executable, if there is one."""
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


@dataclass
class PageLoad:
    """What opening a page showed."""

    errors: list[str] = field(default_factory=list)  # console errors, uncaught exceptions
    requests: list[str] = field(default_factory=list)  # every URL the page asked for
    canvases: int = 0
    screenshot: bytes = b""


class Browser:
    """A headless Chromium driven over the DevTools pipe."""

    def __init__(self, executable: str, width: int = 1300, height: int = 2600) -> None:
        self.profile = tempfile.mkdtemp(prefix="rrs-chromium-")
        args = [executable, *FLAGS, f"--user-data-dir={self.profile}",
                f"--window-size={width},{height}", "--remote-debugging-pipe", "about:blank"]
        # the protocol pipe is the browser's fds 3 (in) and 4 (out): the shell moves this
        # process's pipes there, and gives the browser's own stdin/stdout /dev/null
        self.proc = subprocess.Popen(
            ["sh", "-c", 'exec "$@" 3<&0 4>&1 </dev/null >/dev/null', "sh", *args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.inbox: queue.Queue = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()
        self.size = (width, height)

    def _read(self) -> None:
        buf = b""
        assert self.proc.stdout is not None
        while chunk := self.proc.stdout.read1(65536):
            buf += chunk
            *messages, buf = buf.split(b"\0")
            for m in messages:
                self.inbox.put(json.loads(m))
        self.inbox.put(None)

    def send(self, method: str, params: dict | None = None, session: str | None = None,
             timeout: float = 60.0) -> dict:
        """Send a command and wait for its answer; events met meanwhile go to
        :attr:`events`."""
        self.next_id += 1
        msg: dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(msg).encode() + b"\0")
        self.proc.stdin.flush()
        deadline = time.monotonic() + timeout
        while True:
            m = self.inbox.get(timeout=max(deadline - time.monotonic(), 0.01))
            if m is None:
                raise RuntimeError("the browser closed its DevTools pipe")
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)

    events: list[dict]

    def open(self, path: Path, min_canvases: int, timeout: float = 60.0) -> PageLoad:
        """Open ``path``, wait until its scripts drew ``min_canvases`` canvases (or
        ``timeout``), then take a screenshot of the window."""
        self.events = []
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"]
        for domain in ("Runtime", "Log", "Network", "Page"):
            self.send(f"{domain}.enable", session=session)
        w, h = self.size
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": w, "height": h, "deviceScaleFactor": 1, "mobile": False},
                  session=session)
        self.send("Page.navigate", {"url": path.resolve().as_uri()}, session=session)
        load = PageLoad()
        deadline = time.monotonic() + timeout
        stable = 0
        while time.monotonic() < deadline:
            n = self.send("Runtime.evaluate", {"expression": COUNT_CANVASES,
                                               "returnByValue": True}, session=session)
            count = n.get("result", {}).get("value") or 0
            stable = stable + 1 if count >= min_canvases and count == load.canvases else 0
            load.canvases = count
            if stable >= 3:  # the same count three times, 0.3 s apart: drawn
                break
            time.sleep(0.3)
        shot = self.send("Page.captureScreenshot", {"format": "png"}, session=session)
        load.screenshot = base64.b64decode(shot["data"])
        self.send("Runtime.evaluate", {"expression": "0"}, session=session)  # flush events
        for m in self.events:
            method, p = m.get("method"), m.get("params", {})
            if method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                text = " ".join(str(a.get("value", a.get("description", "")))
                                for a in p.get("args", []))
                load.errors.append(f"console.{p['type']}: {text}")
            elif method == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                load.errors.append("uncaught: " + str(d.get("exception", {}).get(
                    "description", d.get("text", ""))))
            elif method == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                e = p["entry"]
                load.errors.append(f"{e.get('source')}: {e.get('text')} {e.get('url', '')}")
            elif method == "Network.requestWillBeSent":
                load.requests.append(p.get("request", {}).get("url", ""))
            elif method == "Network.loadingFailed":
                load.errors.append(f"failed to load: {p.get('errorText')}")
        self.send("Target.closeTarget", {"targetId": target})
        return load

    def close(self) -> None:
        """End the browser (this one, by its process) and remove its profile."""
        try:
            self.send("Browser.close", timeout=10)
        except (RuntimeError, queue.Empty, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)


def in_ci() -> bool:
    """Whether the tests run in CI (``CI=true``), where a missing browser is a failure."""
    return os.environ.get("CI", "").lower() == "true"

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from nonatomic.rules.lint.base import Invalid, LintRule
from nonatomic.rules.lint.semantics import calls
from nonatomic.rules.lint.semantics.agents import is_deadline
from nonatomic.rules.lint.semantics.callees import CalleeProvider, dotted_name
from nonatomic.rules.lint.semantics.confidence import test_function, test_module
from nonatomic.rules.lint.semantics.loops import ends_with, names_in
from nonatomic.rules.lint.semantics.names import word_list
from nonatomic.rules.lint.semantics.timeouts import in_process_transports, load_specs
from nonatomic.rules.lint.semantics.tools import names_local_host
from nonatomic.rules.lint.tree import walk

DEFAULT_FIX_TIMEOUT = 30
_SESSION = "aiohttp.ClientSession"
_SESSION_REQUESTS = frozenset({"get", "post", "put", "patch", "delete", "head", "options", "request", "ws_connect"})
_RESULT = "concurrent.futures.Future.result"
_QUEUE_GET = "queue.Queue.get"
_CHILD_WAITS = frozenset({"subprocess.Popen.wait", "subprocess.Popen.communicate"})
_CHILD_RUNS = frozenset({"subprocess.run", "subprocess.call", "subprocess.check_call"})
_KILLS = frozenset({"kill", "killpg", "terminate", "send_signal"})
_CAPTURES = frozenset({"capture_output", "stdout", "stderr", "input"})
_CLI_MODULES = frozenset({"argparse", "click", "typer"})
_CLIENT_WORDS = frozenset({"client", "session"})
_DESTINATIONS = frozenset({"url", "host", "address", "base_url"})


class CallWithoutTimeout(LintRule):
    """
    ## What it does
    Flags external calls that can block forever because they have no timeout:
    `requests` functions and `requests.Session` methods, `urllib.request.urlopen`,
    `smtplib.SMTP`, `socket.create_connection`, `subprocess.run` and friends,
    `Popen.communicate/wait`, `Future.result()`, a blocking `Queue.get()`, an
    `aiohttp.ClientSession` without `timeout`, `httpx` with `timeout=None`, and
    LLM clients (`OpenAI`, `Anthropic`, `ChatOpenAI`, ...) built without a timeout.

    ## Why is this bad?
    An agent step that waits forever holds its worker, its locks and its task
    state. The orchestrator's own deadline fires, the task is marked failed and
    retried, and the first call is still alive: when the payment provider finally
    answers, the "failed" task charges the card while its retry charges it again.
    One real incident: a support agent's CRM call hung for 40 minutes on a
    half-open TCP connection; the gateway returned 504 after 60 s, the user asked
    again, and two tickets (and two refunds) came out of one request.

    A call whose library has a sane default (`httpx`, 5 s) is not flagged unless
    the default is switched off with `timeout=None`. A call passing `**kwargs`
    is not flagged: the timeout may be in there; nor is an LLM client given its
    own `http_client`, nor a client (an `aiohttp.ClientSession`, an `httpx` client
    built with `timeout=None`) whose every request where it is held (the function,
    or the class for `self._client`) passes its own `timeout=` or runs under
    `asyncio.wait_for(..., timeout)` or `asyncio.timeout(...)` (written in place,
    or bound first, `budget = asyncio.timeout_at(deadline)`, then `async with
    budget:`), nor a `Queue.get()`
    inside a `while not q.empty():` or `if not q.empty():` test of the same queue.
    Nothing is reported in a nested function that its enclosing function never
    names (its only call commented out): that code cannot run. This holds for
    every rule.

    ## Severity
    An error for a network call that waits forever (requests, urlopen, SMTP,
    sockets, httpx with `timeout=None`); a warning when that call is made at
    the module's top level, which runs once, when the file is run as a script
    (a generator of a data file, a setup step: a hang stops that run, not a
    service), though not a client or a timeout value built there, which every
    function may use; `info` for calls that hang only when
    a child process, a worker or a queue the module fills misbehaves, and for
    clients bounded by a long default (LLM SDKs' 10 minutes, aiohttp's 5,
    `asyncio.open_connection`'s connect, which the kernel gives up after its
    SYN retries, about two minutes on Linux, and whose TLS handshake asyncio
    bounds at 60 seconds):
    whether those need a shorter bound depends on the caller, so they are
    shown, never failing a build; so is a timeout switched off only as a
    parameter's default (`timeout=httpx.Timeout(None)` in a signature), which
    a caller that passes a timeout overrides, or only in the branch a test of
    the configured timeout picks (`... if timeout is not None else
    httpx.Timeout(None)`), where none is what the caller asked for; and so is a
    client with `timeout=None` handed, as its client (`http_client=`,
    `session=`), to a function of another module that makes all its requests,
    where they may run under that function's own deadline; and so is a request
    on a client typed only by its annotation and made by a factory of another
    module (`self._http: requests.Session = _build_http_session()`), which may
    hand back a subclass or a session configured with a default timeout; and
    so is a call to this machine, written as such (`"http://localhost:8000"`,
    `smtplib.SMTP("127.0.0.1", port)`): a closed port fails at once, and only a
    local server that stalls can hold it. `timeout=None` on a stream of events
    (`client.stream(...)`, `stream=True`, or a client held only for streams,
    read by lines or as server-sent events, not as a download's bytes) is a
    warning: a log tail or server-sent events may wait for their events
    as long as they like, but None drops the connect bound too, which
    `httpx.Timeout(10, read=None)` keeps. A test's own calls (in a function named
    `test_*`, or anywhere in a module of tests: one that defines `test_*`
    functions or a `TestCase`) are `info` too: a hang there stops one test
    run, which has a deadline of its own, not a service.

    ## Example
    ```python
    import requests

    def create_ticket(payload):
        return requests.post("https://crm.example.com/tickets", json=payload)
    ```

    ## Use instead
    ```python
    import requests

    def create_ticket(payload):
        return requests.post("https://crm.example.com/tickets", json=payload, timeout=10)
    ```

    ## Options
    `[tool.nonatomic.call-without-timeout]`: `extra-calls` (more `module.func`
    names, or tables shaped like the shipped `timeouts.yaml` entries),
    `ignore-calls` (names never to flag, e.g. a wrapper you trust), and
    `fix-timeout` (seconds the fix writes, default 30).

    ## Fix
    Unsafe: adds `timeout=<fix-timeout>` to `requests`, `urllib`, `smtplib`,
    `socket` and `subprocess` calls. It changes behaviour (the call can now
    raise a timeout), so review it.
    """

    code = "NA201"
    METADATA_DEPENDENCIES = (CalleeProvider,)

    VALID = [
        # A timeout given as keyword, or positionally where the API allows it.
        """
            import requests
            requests.get('https://api.example.com', timeout=5)
            """,
        """
            import urllib.request
            urllib.request.urlopen(url, None, 10)
            """,
        """
            import socket
            socket.create_connection(('db', 5432), 3)
            """,
        # httpx has a 5 s default: only timeout=None is a hazard.
        """
            import httpx
            httpx.post(url, json=body)
            client = httpx.Client()
            """,
        # **kwargs may carry the timeout.
        """
            import requests
            def call(url, **kw):
                return requests.get(url, **kw)
            """,
        # Not the requests module: a local object with a .get method.
        """
            cache = {}
            cache.get('k')
            requests = {}
            """,
        # A future from as_completed is already done: result() does not wait.
        """
            from concurrent.futures import ThreadPoolExecutor, as_completed
            with ThreadPoolExecutor() as ex:
                futs = [ex.submit(work, i) for i in range(4)]
                for fut in as_completed(futs, timeout=30):
                    fut.result()
            """,
        # A nested function its enclosing function never names cannot run: its only call
        # was commented out.  (A decorated one is registered, so it counts as named.)
        """
            import requests

            def describe(images, base_url):
                def fetch_size(img):
                    response = requests.head(base_url + img["src"])
                    return int(response.headers.get("Content-Length", 0))

                return [{"src": img["src"], "size": 0} for img in images]  # fetch_size(img)
            """,
        # A non-blocking queue read does not wait.
        """
            import queue
            q = queue.Queue()
            item = q.get(block=False)
            item = q.get(False)
            """,
        # A queue drained after testing that it is not empty: the item is there.
        """

            import queue

            def drain(events: queue.Queue) -> list:
                items = []
                while not events.empty():
                    items.append(events.get())
                return items

            class Worker:
                def __init__(self):
                    self.results = queue.Queue()

                def latest(self):
                    if self.running and not self.results.empty():
                        return self.results.get()
                    return None
            """,
        # asyncio's loop-level wait is bounded elsewhere (NA202/NA203 cover it).
        """
            import asyncio
            q = asyncio.Queue()
            async def f():
                await q.get()
            """,
        """
            from openai import OpenAI
            client = OpenAI(timeout=20.0, max_retries=2)
            """,
        """
            from langchain_openai import ChatOpenAI
            llm = ChatOpenAI(model='gpt-4o', request_timeout=30)
            """,
        """
            import aiohttp
            async def f():
                async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as s:
                    pass
            """,
        # Each request on the session bounds itself (or may, through **kwargs).
        """
            import aiohttp
            async def f(url, **kw):
                async with aiohttp.ClientSession() as s:
                    async with s.get(url, timeout=aiohttp.ClientTimeout(total=10)) as r:
                        pass
                    await s.post(url, **kw)
            """,
        # The client's own timeout is off because each request the class makes is bounded
        # by the caller's deadline.
        """
            import asyncio
            import httpx

            class Transport:
                def __init__(self, deadline: float, client: httpx.AsyncClient | None = None):
                    self._deadline = deadline
                    self._client = client or httpx.AsyncClient(timeout=None)

                async def fetch(self, url):
                    return await asyncio.wait_for(self._client.get(url), timeout=self._deadline)

                async def send(self, url, body):
                    async with asyncio.timeout(self._deadline):
                        return await self._client.post(url, json=body)
            """,
        # The caller's remaining budget, set up before the request and entered later: the
        # client made (or given) under it needs no timeout of its own.
        """

            import asyncio
            from contextlib import nullcontext

            import httpx

            async def execute(request, remaining_ms, http_client=None):
                loop = asyncio.get_running_loop()
                deadline = None if remaining_ms is None else loop.time() + remaining_ms / 1000
                budget = asyncio.timeout_at(deadline)
                async with budget:
                    async with (
                        httpx.AsyncClient(timeout=None) if http_client is None else nullcontext(http_client)
                    ) as client:
                        return await client.send(request)
            """,
        # The client's own http_client may carry the timeout.
        """
            import httpx
            from openai import AsyncOpenAI
            client = AsyncOpenAI(http_client=httpx.AsyncClient(timeout=30))
            """,
        # A parameter that shadows the module name is not the module.
        """
            import requests
            def f(requests):
                requests.get('x')
            """,
        # A connection under a deadline; an annotated client whose calls pass a timeout.
        """

            import asyncio

            async def ping(host):
                reader, writer = await asyncio.wait_for(asyncio.open_connection(host, 443), timeout=5)
                async with asyncio.timeout(5):
                    reader, writer = await asyncio.open_connection(host, 443)
            """,
        """

            import httpx
            import requests

            def create_ticket(http: requests.Session, client: httpx.Client, payload):
                client.post("https://crm.example.com/notes", json=payload)
                return http.post("https://crm.example.com/tickets", json=payload, timeout=10)
            """,
        # The sync-over-async bridge: it is meant to wait for the coroutine.
        """

            import asyncio
            from concurrent.futures import ThreadPoolExecutor

            def run_sync(coro):
                try:
                    asyncio.get_running_loop()
                except RuntimeError:
                    return asyncio.run(coro)
                with ThreadPoolExecutor(max_workers=1) as pool:
                    return pool.submit(asyncio.run, coro).result()
            """,
        # Reaping a child that was just killed: it exits now.
        """

            import os, signal, subprocess

            def run_sandboxed(argv, deadline):
                process = subprocess.Popen(argv, start_new_session=True)
                try:
                    process.wait(timeout=deadline)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait()
                finally:
                    if process.poll() is None:
                        process.kill()
                        process.communicate()
            """,
        # A `data:` URL is decoded in memory: no network.
        """

            import base64
            import urllib.request

            def decode_base64(value):
                if value.startswith("data:"):
                    return urllib.request.urlopen(value).read()
                return base64.b64decode(value, validate=True)
            """,
        # A function that refuses anything but a `data:` URI before opening it.
        """

            import urllib.request

            def from_data_uri(data_uri):
                if not data_uri.startswith("data:"):
                    raise ValueError("not a data URI")
                with urllib.request.urlopen(data_uri) as response:
                    return response.read()
            """,
        # httpx.Timeout(None, ...) with its read bounded: a stalled server still times out.
        """

            import httpx

            def send(url, params, env):
                timeout = httpx.Timeout(None, connect=env.connect_timeout, read=env.read_timeout)
                return httpx.post(url, data=params, timeout=timeout)
            """,
        # open_connection over a socket the caller already connected, under its own timeout.
        """

            import asyncio

            async def open_via_proxy(self, timeout):
                sock = await self._proxy_connect(timeout=timeout)
                self._reader, self._writer = await asyncio.open_connection(sock=sock)
            """,
        # A Unix socket is this machine's: connecting succeeds or fails at once.
        """

            import asyncio

            class UnixSocketSignaling:
                async def _connect(self, server):
                    self._reader, self._writer = await asyncio.open_unix_connection(self._path)
            """,
        # A test asserting a client's default: the Timeout is compared, never given to a call.
        """

            import httpx

            def test_default_timeout(client):
                assert client._httpx_client.timeout == httpx.Timeout(None)
                assert client._httpx_client.timeout != httpx.Timeout(5.0)
            """,
        # A table of a test's expected values: each row is compared with what a mock was given.
        """

            import aiohttp

            async def test_request_timeout(api, mock_request):
                for given, expected in [
                    (None, aiohttp.ClientTimeout()),
                    (5.0, aiohttp.ClientTimeout(total=5.0)),
                    (aiohttp.ClientTimeout(total=None), aiohttp.ClientTimeout(total=None)),
                ]:
                    await api.request("GET", "http://test", _request_timeout=given)
                    mock_request.assert_called_once_with("GET", "http://test", timeout=expected)
            """,
        # No total for a long-lived stream, but a stalled read still times out.
        """

            import aiohttp

            def follow_timeout(idle):
                return aiohttp.ClientTimeout(total=None, sock_connect=30, sock_read=idle)
            """,
        # A client over an in-process ASGI app: no network to wait for.
        """

            from typing import Final

            import httpx

            _TRANSPORT: Final = httpx.ASGITransport(app=dispatch)

            def asgi_client():
                return make_client(params={"transport": _TRANSPORT, "timeout": httpx.Timeout(None)})

            def test_client(app):
                return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), timeout=None)
            """,
        # A command-line program runs an install in the foreground, on the user's terminal.
        """

            import subprocess
            import click

            @click.command()
            def install():
                result = subprocess.run(["uvx", "playwright", "install", "chromium"])
                if result.returncode == 0:
                    print("Installation complete.")
            """,
    ]
    INVALID = [
        # A test's own request to the server it started: a hang stops the run, shown at info.
        Invalid("""
                import requests

                def test_health(app_server):
                    response = requests.get(f"{app_server.url}/health")
                    assert response.status_code == 200
                """, line=4, severity="info"),
        # A helper of a module of tests (the versions a compatibility test runs against): the
        # test run's own, shown at info too.
        Invalid("""
                import json
                from urllib import request

                def released_versions():
                    return json.load(request.urlopen("https://pypi.org/pypi/somepackage/json"))["releases"]

                def test_upgrade_keeps_data(tmp_path):
                    for version in released_versions():
                        install(version, tmp_path)
                """, line=5, severity="info"),
        # An endpoint named `test_*` (it sends a test notification) is a route, not a test: its
        # module is the server's, so the call stands at the rule's severity.
        Invalid("""
                import requests
                from fastapi import FastAPI

                app = FastAPI()

                @app.post("/api/notifications/test")
                async def test_notification(body: dict):
                    response = requests.post(WEBHOOK_URL, json={"text": body["text"]})
                    return {"ok": response.ok}
                """, line=8),
        # `timeout=None` on a stream (a log tail, server-sent events) is on purpose, but drops the
        # connect bound too: a warning, on the stream and on a client held only for streams.
        Invalid("""
                import httpx

                async def follow_logs(url, headers):
                    async with httpx.AsyncClient(timeout=None) as client:
                        async with client.stream("GET", url, headers=headers) as response:
                            async for line in response.aiter_lines():
                                print(line)
                """, line=4, severity="warning"),
        Invalid("""
                def stream_signals(http, url):
                    with http.stream("GET", url, timeout=None) as response:
                        yield from response.iter_lines()

                import httpx
                client = httpx.Client(timeout=30.0)
                def tail(url):
                    return stream_signals(client, url)

                def watch(url):
                    with client.stream("GET", url, timeout=None) as response:
                        yield from response.iter_lines()
                """, line=11, severity="warning"),
        # A download streamed as bytes is bounded by a read timeout; None there is an error.
        Invalid("""
                import httpx

                async def download(url, destination):
                    async with httpx.AsyncClient(follow_redirects=True, timeout=None) as client:
                        async with client.stream("GET", url) as response:
                            with open(destination, "wb") as f:
                                async for chunk in response.aiter_bytes(1 << 20):
                                    f.write(chunk)
                """, line=4),
        # A client held for a stream and for a plain request is not a stream's.
        Invalid("""
                import httpx

                async def follow_logs(url):
                    async with httpx.AsyncClient(timeout=None) as client:
                        await client.post(url + "/start")
                        async with client.stream("GET", url) as response:
                            async for line in response.aiter_lines():
                                print(line)
                """, line=4),
        # Only the connect phase bounded: a server that accepts and then stalls hangs the read.
        Invalid("""
                import httpx
                timeout = httpx.Timeout(None, connect=5.0)
                """, line=2),
        # A data: test elsewhere does not clear a URL that may be any address.
        Invalid("""
                import urllib.request

                def fetch(url):
                    if url.startswith("data:"):
                        print("inline")
                    return urllib.request.urlopen(url).read()
                """, line=6),
        Invalid(
            """
                import requests
                def run(url, body):
                    requests.post('https://pay.example.com/refund', json=body)
                """,
            line=3,
            fixed="""
                import requests
                def run(url, body):
                    requests.post('https://pay.example.com/refund', json=body, timeout=30)
                """,
        ),
        Invalid("""
                from requests import post as p
                def run(url, body):
                    p(url)
                """, line=3, fixed="""
                from requests import post as p
                def run(url, body):
                    p(url, timeout=30)
                """),
        Invalid("""
                import requests
                def run(url, body):
                    requests.get(url, timeout=None)
                """, line=3, fixed="""
                import requests
                def run(url, body):
                    requests.get(url, timeout=30)
                """),
        Invalid(
            """
                import requests

                def run(url, body):
                    requests.put(
                        url,
                        json=body,
                    )
                """,
            line=4,
            fixed="""
                import requests

                def run(url, body):
                    requests.put(
                        url,
                        json=body,
                        timeout=30,
                    )
                """,
        ),
        # A request at the module's top level runs once, when the file is run as a script (a
        # generator of a data file): a hang stops that run, not a service; a warning.
        Invalid("""
                import json
                import urllib.request

                with urllib.request.urlopen("https://registry.example.org/ids.json") as stream:
                    DATA = json.load(stream)
                """, line=4, severity="warning"),
        # Sessions, however they are made and kept (ruff and bandit miss these).
        Invalid("""
                import requests
                def run(url, body):
                    s = requests.Session()
                    s.post(url, json=body)
                """, line=4),
        Invalid("""
                import requests
                def run(url, body):
                    with requests.session() as s:
                        s.get(url)
                """, line=4),
        Invalid(
            """
                import requests
                class Crm:
                    def __init__(self):
                        self.http = requests.Session()
                    def create(self, body):
                        return self.http.post(self.url, json=body)
                """,
            line=6,
        ),
        Invalid("""
                import httpx
                httpx.post(url, json=body, timeout=None)
                """, line=2),
        Invalid("""
                import httpx
                client = httpx.AsyncClient(timeout=None)
                """, line=2),
        Invalid("""
                import aiohttp
                async def f():
                    async with aiohttp.ClientSession() as s:
                        pass
                """, line=3, severity="info"),
        Invalid("""
                import aiohttp
                t = aiohttp.ClientTimeout()
                """, line=2),
        # One request of the class outside the deadline: the client's None reaches it.
        Invalid("""
                import asyncio
                import httpx

                class Transport:
                    def __init__(self, deadline: float):
                        self._deadline = deadline
                        self._client = httpx.AsyncClient(timeout=None)

                    async def fetch(self, url):
                        return await asyncio.wait_for(self._client.get(url), timeout=self._deadline)

                    async def stream(self, url):
                        return await self._client.get(url)
                """, line=7),
        # One request on the session without its own timeout is enough.
        Invalid(
            """
                import aiohttp
                async def f(url):
                    session = aiohttp.ClientSession()
                    await session.get(url, timeout=5)
                    await session.post(url, json={})
                """,
            line=3, severity="info"),
        Invalid("""
                from urllib.request import urlopen
                def run(url, body):
                    urlopen(url)
                """, line=3),
        Invalid("""
                import smtplib
                def run(url, body):
                    server = smtplib.SMTP('smtp.example.com', 587)
                """, line=3),
        Invalid("""
                import socket
                def run(url, body):
                    socket.create_connection(('db', 5432))
                """, line=3),
        Invalid("""
                import subprocess
                subprocess.run(['kubectl', 'apply', '-f', 'x.yaml'], check=True)
                """, line=2, severity="info"),
        Invalid("""
                import subprocess
                p = subprocess.Popen(cmd)
                out, err = p.communicate()
                """, line=3, severity="info"),
        Invalid(
            """
                from concurrent.futures import ThreadPoolExecutor
                with ThreadPoolExecutor() as ex:
                    fut = ex.submit(charge, order)
                    fut.result()
                """,
            line=4, severity="info"),
        Invalid("""
                import concurrent.futures as cf
                ex = cf.ThreadPoolExecutor(4)
                ex.submit(f).result()
                """, line=3, severity="info"),
        Invalid("""
                import queue
                jobs = queue.Queue()
                def worker():
                    job = jobs.get()
                """, line=4, severity="info"),
        # The loop tests a stop flag, not the queue: the read waits for the next job.
        Invalid("""

                import queue
                import threading

                def worker(jobs: queue.Queue, stop: threading.Event):
                    while not stop.is_set():
                        job = jobs.get()
                        job.run()
                """, line=7, severity="info"),
        # A client is known by its constructor or its annotation, not its name.
        Invalid("""

                import requests

                def create_ticket(http: requests.Session, payload):
                    return http.post("https://crm.example.com/tickets", json=payload)
                """, line=5),
        Invalid("""

                from google.auth.transport.requests import AuthorizedSession

                def upload(credentials, blob):
                    authed = AuthorizedSession(credentials)
                    return authed.post("https://storage.googleapis.com/upload/x", data=blob)
                """, line=6),
        Invalid("""

                import urllib.request

                class Fetcher:
                    def __init__(self):
                        self.urllibrequest = urllib.request

                    def fetch(self, url):
                        return self.urllibrequest.urlopen(url).read()
                """, line=9),
        Invalid("""

                from dataclasses import dataclass

                import requests

                @dataclass
                class Crm:
                    http: requests.Session

                    def create_ticket(self, payload):
                        return self.http.post("https://crm.example.com/tickets", json=payload)
                """, line=11),
        Invalid("""

                from anthropic import AnthropicVertex

                llm = AnthropicVertex(region="us-east5", project_id="acme")
                """, line=4, severity="info"),
        Invalid("""
                import requests

                def describe(images, base_url):
                    def fetch_size(img):
                        response = requests.head(base_url + img["src"])
                        return int(response.headers.get("Content-Length", 0))

                    return [{"src": img["src"], "size": fetch_size(img)} for img in images]
                """, line=5),
        Invalid("""

                import asyncio

                async def ping(host):
                    reader, writer = await asyncio.open_connection(host, 443)
                    writer.close()
                """, line=5, severity="info"),
        # A timeout switched off only when the configured one asks for none: the caller's opt-out.
        Invalid("""
                import httpx

                def run_code(client, code, timeout=None, request_timeout=10):
                    return client.post("/execute", json={"code": code},
                                       timeout=httpx.Timeout(timeout, connect=request_timeout)
                                       if timeout is not None else httpx.Timeout(None))
                """, line=6, severity="info"),
        # A timeout switched off only as a parameter's default: callers that pass one override it.
        Invalid("""
                import httpx

                def embed(texts, api_key, timeout: float | httpx.Timeout = httpx.Timeout(None)):
                    with httpx.Client(timeout=timeout) as client:
                        return client.post(EMBED_URL, json={"texts": texts}, headers={"key": api_key}).json()
                """, line=3, severity="info"),
        # A client handed, as its client, to a function of another module that makes every
        # request: they may run under that function's deadline, out of sight; shown, at info.
        Invalid("""

                import httpx
                from .transport import execute_request

                def register(connection):
                    http_client = None

                    async def handle(params):
                        nonlocal http_client
                        if http_client is None:
                            http_client = httpx.AsyncClient(timeout=None, follow_redirects=False)
                        return await execute_request(connection, params, http_client=http_client)

                    return handle
                """, line=11, severity="info"),
        # A session typed by its annotation and made by another module's factory: the factory
        # may give it a default timeout (a subclass whose `request` sets one), out of sight; info.
        Invalid("""
                import requests
                from ._http_session import build_http_session

                class AuthManager:
                    def __init__(self):
                        self._http_session: requests.Session = build_http_session()

                    def fetch_token(self, token_url, headers, data):
                        return self._http_session.post(token_url, headers=headers, data=data)
                """, line=9, severity="info"),
        # To this machine: a closed port fails at once; only a local server that stalls holds it.
        Invalid("""
                import smtplib

                def send_to_sink(port, message):
                    with smtplib.SMTP("127.0.0.1", port) as server:
                        server.send_message(message)
                """, line=4, severity="info"),
        # ... but handed to a function of this module that sends with no deadline: seen, so reported.
        Invalid("""
                import httpx

                def sync_all(records):
                    client = httpx.Client(timeout=None)
                    return upload(records, http_client=client)

                def upload(records, http_client):
                    return http_client.post("https://crm.example.com/import", json=records)
                """, line=4),
        Invalid("""
                from openai import OpenAI
                client = OpenAI()
                """, line=2, severity="info"),
        Invalid("""
                import anthropic
                client = anthropic.AsyncAnthropic(api_key=key)
                """, line=2, severity="info"),
        Invalid("""
                from langchain_anthropic import ChatAnthropic
                llm = ChatAnthropic(model='claude')
                """, line=2, severity="info"),
    ]

    def __init__(self, context=None) -> None:
        super().__init__(context)
        options = self.context.options
        self.specs = load_specs(options.get("extra-calls"))
        self.ignored = set(options.get("ignore-calls", ()))
        self.fix_timeout = options.get("fix-timeout", DEFAULT_FIX_TIMEOUT)
        self.transports = in_process_transports()

    def visit_Module(self, node: cst.Module) -> None:
        self._scopes: list[cst.CSTNode] = [node]
        self._bound: dict[int, str] = {}  # id(call) -> the name its result is bound to
        self._deadlines = 0  # `with asyncio.timeout(...)` blocks open around the call
        self._deadline_vars: dict[int, frozenset[str]] = {}  # id(scope) -> its names bound to a deadline
        self._defined = _defined_names(node)
        self._handed: dict[int, str] = {}  # id(a call given as `http_client=`) -> what it is handed to
        self._factories = self._factory_made(node)
        self._waited: set[int] = set()  # calls handed to `asyncio.wait_for(..., timeout)`
        self._killed = [False]  # per function: a child was killed before this point
        self._tests: list[cst.BaseExpression] = []  # tests of the `if`s around the call
        self._exits: list[list[cst.BaseExpression]] = [[]]  # per function: tests of the `if`s above that leave it
        self._guards: list[cst.BaseExpression] = []  # tests of the `if`/`while` bodies the call is in
        self._classes: list[cst.ClassDef] = []
        self._cli = _is_command_line(node)
        self._tests_module = test_module(node)
        self._module = node
        self._local_transports: set[str] | None = None  # see _transport_names, found when first needed
        # the calls made inside a call or dict that hands an in-process transport over as `transport`
        self._local_calls: set[int] = set()
        self._compared: set[int] = set()  # calls that are an operand of a comparison or an element of a literal
        self._defaults: set[int] = set()  # calls that are a parameter's default value
        self._chosen: dict[int, cst.BaseExpression] = {}  # a branch of `a if test else b` -> its test

    def visit_With(self, node: cst.With) -> None:
        if _enters_deadline(node, self._deadline_names()):
            self._deadlines += 1

    def leave_With(self, original_node: cst.With) -> None:
        if _enters_deadline(original_node, self._deadline_names()):
            self._deadlines -= 1

    def _deadline_names(self) -> frozenset[str]:
        scope = self._scopes[-1]
        if id(scope) not in self._deadline_vars:
            self._deadline_vars[id(scope)] = _names_of_deadlines(scope)
        return self._deadline_vars[id(scope)]

    def visit_If(self, node: cst.If) -> None:
        self._tests.append(node.test)

    def leave_If(self, original_node: cst.If) -> None:
        self._tests.pop()
        # `if not url.startswith("data:"): raise ...`: what follows runs only when the test failed
        if original_node.orelse is None and ends_with(original_node.body, cst.Raise, cst.Return):
            self._exits[-1].append(original_node.test)

    def visit_If_body(self, node: cst.If) -> None:
        self._guards.append(node.test)

    def leave_If_body(self, node: cst.If) -> None:
        self._guards.pop()

    def visit_While_body(self, node: cst.While) -> None:
        self._guards.append(node.test)

    def leave_While_body(self, node: cst.While) -> None:
        self._guards.pop()

    def _by_design(self, node: cst.Call, callee: str) -> bool:
        """Calls whose wait is bounded by what surrounds them, or is the point."""
        if callee == _RESULT:
            # `pool.submit(asyncio.run, coro).result()`: the sync-over-async bridge, meant
            # to wait for the coroutine (which bounds itself, or is NA202's business).
            receiver = node.func.value if isinstance(node.func, cst.Attribute) else None
            return isinstance(receiver, cst.Call) and any(
                dotted_name(arg.value) == "asyncio.run" for arg in receiver.args[:1]
            )
        if callee in _CHILD_WAITS:
            return self._killed[-1]  # reaping a child that was killed: it exits now
        if callee == _QUEUE_GET and isinstance(node.func, cst.Attribute):
            return _tested_not_empty(node.func.value, self._guards)
        if callee == "urllib.request.urlopen" and node.args:
            return _data_url(node.args[0].value, self._tests + self._exits[-1])
        if callee in _CHILD_RUNS:
            # A command a command-line program runs in the foreground, on the user's
            # terminal (nothing captured): the user sees it and stops it; a timeout would
            # cut an install or a server short.
            return self._cli and not any(arg.keyword is not None and arg.keyword.value in _CAPTURES for arg in node.args)
        return False

    def _under_deadline(self, node: cst.Call) -> bool:
        return self._deadlines > 0 or id(node) in self._waited

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._scopes.append(node)
        self._killed.append(False)
        self._exits.append([])

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._scopes.pop()
        self._killed.pop()
        self._exits.pop()

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None and isinstance(node.asname.name, cst.Name):
            self._bind(node.item, node.asname.name.value)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._classes.append(node)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._classes.pop()

    def visit_Assign(self, node: cst.Assign) -> None:
        target = node.targets[0].target if len(node.targets) == 1 else None
        name = dotted_name(target) if isinstance(target, (cst.Name, cst.Attribute)) else None
        if name is not None and (isinstance(target, cst.Name) or name.count(".") == 1 and name.startswith("self.")):
            value = node.value
            if isinstance(value, cst.BooleanOperation) and isinstance(value.operator, cst.Or):
                value = value.right  # `self._client = client or httpx.AsyncClient(timeout=None)`
            self._bind(value, name)

    def _bind(self, value: cst.BaseExpression, name: str) -> None:
        value = value.expression if isinstance(value, cst.Await) else value
        if isinstance(value, cst.IfExp):  # `(httpx.AsyncClient(...) if given is None else nullcontext(given)) as client`
            self._bind(value.body, name)
            self._bind(value.orelse, name)
        elif isinstance(value, cst.Call):
            self._bound[id(value)] = name

    def _held_requests(self, client: cst.Call, callee: str) -> tuple[str, cst.CSTNode, list] | None:
        """The name the client is bound to, where it is held (its function, or its class for
        `self._client`), and each request made on it there with whether a deadline bounds it."""
        name = self._bound.get(id(client))
        methods = self._methods(callee)
        if name is None or not methods:
            return None
        held_in = self._scopes[-1] if "." not in name else self._classes[-1] if self._classes else None
        if held_in is None:
            return None
        return name, held_in, [(request, under) for request, under in _calls_under_deadline(held_in)
                               if isinstance(request.func, cst.Attribute) and request.func.attr.value in methods
                               and dotted_name(request.func.value) == name]

    def _factory_made(self, module: cst.Module) -> dict[str, str]:
        """Names typed only by their annotation, their value made by a factory of another
        module (`self._http: requests.Session = _build_http_session()`) -> the factory: it may
        hand back a subclass or a configured client that sets a default timeout.  A factory
        this module defines is read here: its session is what the annotation says."""
        made: dict[str, str] = {}
        for node in walk.subtree(module):
            if isinstance(node, cst.AnnAssign) and isinstance(node.value, cst.Call):
                factory = self._receiver(node.value)
                built = self.get_metadata(CalleeProvider, node.value, None)
                if factory is not None and not (built and self._methods(built)) \
                        and (name := dotted_name(node.target)) is not None:
                    made[name] = factory
        return made

    def _methods(self, callee: str) -> set[str]:
        """The request methods of a client class the packs know (`httpx.AsyncClient`: `get`, `post`, ...)."""
        return {other.rsplit(".", 1)[1] for other in self.specs if other.startswith(f"{callee}.")} or (
            _SESSION_REQUESTS if callee == _SESSION else set())

    def _requests_bounded(self, client: cst.Call, callee: str) -> bool:
        """Every request made on the client where it is held bounds itself: passes its own
        timeout (or **kwargs), or runs under `asyncio.wait_for(..., timeout)` / `with
        asyncio.timeout(...)`; and there is one.  Then the client needs none, and
        `timeout=None` at the client is on purpose."""
        held = self._held_requests(client, callee)
        requests = held[2] if held is not None else []
        return bool(requests) and all(
            under or calls.has_star_kwargs(request)
            or ((given := calls.keyword(request, "timeout")) is not None and not calls.is_none(given.value))
            for request, under in requests
        )

    def _streams(self, call: cst.Call, callee: str) -> bool:
        """The call reads a stream of events (`client.stream(...)`, `stream=True`, read by lines or
        as server-sent events, not as bytes of a download), or is a client whose every request
        where it is held does (and there is one)."""
        readers = {node.func.attr.value for node in walk.subtree(self._scopes[-1]) if isinstance(node, cst.Call)
                   and isinstance(node.func, cst.Attribute)} if self._scopes else set()
        if not readers & _EVENT_READS or readers & _BYTE_READS:
            return False
        if _is_stream(call):
            return True
        held = self._held_requests(call, callee)
        return held is not None and bool(held[2]) and all(_is_stream(request) for request, _ in held[2])

    def _handed_to(self, client: cst.Call, callee: str) -> str | None:
        """What the client is handed to as its client (`run(..., http_client=client)`,
        `SDK(http_client=httpx.AsyncClient(timeout=None))`), when that is defined in another
        module and no request is made on the client here: its requests are made out of
        sight, where they may run under a deadline of their own."""
        if id(client) in self._handed:
            return self._handed[id(client)]
        held = self._held_requests(client, callee)
        if held is None or held[2]:
            return None
        name, held_in, _ = held
        return next((receiver for node in walk.subtree(held_in) if isinstance(node, cst.Call)
                     and (receiver := self._receiver(node)) is not None
                     for arg in node.args if _client_keyword(arg) and dotted_name(arg.value) == name), None)

    def _receiver(self, call: cst.Call) -> str | None:
        """The callable's name when it is defined in another module, else None."""
        name = dotted_name(call.func)
        return name if name is not None and name.rsplit(".", 1)[-1] not in self._defined else None

    def _in_process(self, value: cst.BaseExpression) -> bool:
        if isinstance(value, cst.Name):
            return value.value in self._transport_names()
        return isinstance(value, cst.Call) and (dotted_name(value.func) or "").rsplit(".", 1)[-1] in self.transports

    def _transport_names(self) -> set[str]:
        """Names the module binds to an in-process transport (`_TRANSPORT = httpx.ASGITransport(app=...)`);
        looked for only in a module that hands a name over as `transport`."""
        if self._local_transports is None:
            self._local_transports = {
                target.value
                for assign in walk.subtree(self._module)
                if isinstance(assign, (cst.Assign, cst.AnnAssign)) and isinstance(assign.value, cst.Call)
                and self._in_process(assign.value)
                for target in ([t.target for t in assign.targets] if isinstance(assign, cst.Assign) else [assign.target])
                if isinstance(target, cst.Name)
            }
        return self._local_transports

    def _hand_over(self, entries: list[tuple[str | None, cst.BaseExpression]], node: cst.CSTNode) -> None:
        """A call or dict given an in-process `transport`: it and the calls in it reach no network."""
        if any(key == "transport" and self._in_process(value) for key, value in entries):
            self._local_calls |= {id(n) for n in walk.subtree(node) if isinstance(n, cst.Call)}

    def visit_IfExp(self, node: cst.IfExp) -> None:
        for branch in (node.body, node.orelse):
            self._chosen[id(branch)] = node.test

    def _opted_out(self, node: cst.Call) -> bool:
        """`Timeout(t, connect=c) if t is not None else Timeout(None)`, or under `if timeout == 0:`:
        the value is None only when the configured timeout asks for none, the caller's choice."""
        tests = [self._chosen[id(node)]] if id(node) in self._chosen else self._tests
        return any("timeout" in word_list(name) for test in tests for name in names_in(test))

    def visit_Param(self, node: cst.Param) -> None:
        if isinstance(node.default, cst.Call):
            self._defaults.add(id(node.default))

    def visit_Comparison(self, node: cst.Comparison) -> None:
        self._compared |= {id(side) for side in (node.left, *(c.comparator for c in node.comparisons))}

    def visit_Tuple(self, node: cst.Tuple) -> None:
        # `(given, aiohttp.ClientTimeout(total=None))` rows of a test's table: values to compare
        self._compared |= {id(element.value) for element in node.elements}

    visit_List = visit_Set = visit_Tuple

    def visit_Dict(self, node: cst.Dict) -> None:
        self._hand_over([(e.key.evaluated_value if isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString)
                          else None, e.value) for e in node.elements], node)

    def visit_Call(self, node: cst.Call) -> None:
        self._hand_over([(a.keyword.value if a.keyword else None, a.value) for a in node.args], node)
        receiver = self._receiver(node)
        if receiver is not None:
            self._handed |= {id(arg.value): receiver for arg in node.args if _client_keyword(arg)}
        if id(node) in self._local_calls:
            return
        if node.args and is_deadline(node):  # `wait_for(open_connection(...), 10)`
            first = node.args[0].value
            self._waited.add(id(first.expression if isinstance(first, cst.Await) else first))
        if (dotted_name(node.func) or "").rsplit(".", 1)[-1] in _KILLS:
            self._killed[-1] = True
        callee = self.get_metadata(CalleeProvider, node, None)
        spec = self.specs.get(callee) if callee else None
        if spec is None or callee in self.ignored or calls.has_star_kwargs(node) or self._by_design(node, callee):
            return
        if spec.value and id(node) in self._compared:
            # `assert client.timeout == httpx.Timeout(None)`, a row of expected values: a value
            # compared or tabled, bounding nothing
            return
        if any((other := calls.keyword(node, word)) is not None and not calls.is_none(other.value)
               for word in spec.bounded_by):
            return
        if spec.nonblocking is not None:
            flag = calls.argument(node, (spec.nonblocking[0],), spec.nonblocking[1])
            if flag is not None and calls.is_false(flag.value):
                return
        # any one of the keywords bounds it: `ClientTimeout(total=None, sock_read=60)` does
        given = next((arg for arg in node.args if arg.keyword is not None and arg.keyword.value in spec.keywords
                      and not calls.is_none(arg.value)), None) or calls.argument(node, spec.keywords, spec.position)
        if given is None and calls.has_star_args(node) and spec.position is not None:
            return  # *args may reach the timeout's position
        explicit_none = given is not None and calls.is_none(given.value)
        if spec.when == "none":
            bad = explicit_none
        elif spec.when == "wrapped":
            bad = not self._under_deadline(node)
        else:
            bad = given is None or explicit_none
        if not bad or self._requests_bounded(node, callee):
            return
        handed_to = self._handed_to(node, callee) if self._methods(callee) else None
        receiver = dotted_name(node.func.value) if isinstance(node.func, cst.Attribute) else None
        factory = self._factories.get(receiver) if receiver is not None else None
        local = any(names_local_host(value) for value in _destinations(node))
        short = callee.rsplit(".", 2)
        shown = ".".join(short[-2:]) if len(short) > 1 else callee
        what = "timeout=None" if explicit_none else "no timeout"
        replacement = None
        if spec.fixable:
            replacement = calls.with_keyword(
                node, spec.keywords[0], cst.parse_expression(repr(self.fix_timeout))
            )
        # A test's own call (pytest's `test_*`, or a helper of a module of tests): a hang
        # stops that run, which has a deadline of its own in CI, not a service; shown, at info.
        in_test = " (in a test)" if any(isinstance(scope, cst.FunctionDef) and test_function(scope)
                                        for scope in self._scopes) else " (in a test module)" if self._tests_module else ""
        # `timeout: httpx.Timeout = httpx.Timeout(None)`: the value only of calls that pass
        # none, which the module's callers may never make; shown, at info.
        default = id(node) in self._defaults
        opted_out = spec.value and explicit_none and self._opted_out(node)
        # `timeout=None` on a stream (log tails, SSE) is on purpose: its events may be minutes
        # apart.  What it loses is the connect bound, so it is a warning that says so.
        stream = explicit_none and not opted_out and self._streams(node, callee)
        # A request made at the module's top level runs once, when the file is run as a script
        # (a generator, a setup step): a hang stops that run, seen by whoever started it, not a
        # service's worker; a warning.  (A client or timeout built there serves every function.)
        script = spec.when == "missing" and not spec.value and len(self._scopes) == 1 and not self._classes \
            and not self._tests_module
        note = in_test if in_test else " (a parameter's default: callers that pass a timeout override it)" \
            if default else " (chosen by a test of the configured timeout: none only when it asks for none)" \
            if opted_out else f" (handed to `{handed_to}`, which makes its requests out of sight: they may run" \
            " under its deadline)" if handed_to else f" (`{receiver}` is typed only by its annotation: `{factory}()`" \
            " made it, and may give it a default timeout)" if factory else " (to this machine: only a local" \
            " server that stalls holds it)" if local else " (at the module's top level: run once, as a script)" \
            if script else ""
        why = ("a stream may wait for its events as long as it likes, but None also drops the connect and"
               " first-byte bound: a server that accepts and never answers holds it forever (bound the connect,"
               " `Timeout(10, read=None)`)") if stream else spec.why
        self.report(
            node,
            f"`{shown}(...)` has {what}: {why}{note}",
            replacement=replacement,
            fix_title=f"Add `{spec.keywords[0]}={self.fix_timeout}`" if replacement else None,
            severity="info" if in_test or default or opted_out or handed_to or factory or local
            else "warning" if (stream or script) and spec.severity is None else spec.severity,
        )


# How a streamed response is read: as events (lines, text, server-sent events), which may be
# minutes apart by design, or as the bytes of a download, which a read timeout should bound.
_EVENT_READS = frozenset({"iter_lines", "aiter_lines", "iter_text", "aiter_text", "iter_sse", "aiter_sse", "events"})
_BYTE_READS = frozenset({"iter_bytes", "aiter_bytes", "iter_raw", "aiter_raw", "iter_content", "iter_chunked",
                         "iter_any"})


def _is_stream(call: cst.Call) -> bool:
    """`client.stream("GET", url)`, `httpx.stream(...)`, `requests.get(url, stream=True)`."""
    flag = calls.keyword(call, "stream")
    return (isinstance(call.func, cst.Attribute) and call.func.attr.value == "stream") or (
        flag is not None and isinstance(flag.value, cst.Name) and flag.value.value == "True")


def _calls_under_deadline(tree: cst.CSTNode, under: bool = False,
                          names: frozenset[str] | None = None) -> Iterator[tuple[cst.Call, bool]]:
    """Each call in `tree`, and whether a deadline bounds it: it is the first argument of
    `asyncio.wait_for(..., timeout)` or inside `with asyncio.timeout(...)` (or inside
    `with budget:` where `tree` bound `budget` to one)."""
    names = _names_of_deadlines(tree) if names is None else names
    if isinstance(tree, cst.With) and _enters_deadline(tree, names):
        under = True
    waited = None
    if isinstance(tree, cst.Call):
        yield tree, under
        if tree.args and is_deadline(tree):
            waited = tree.args[0]
    for child in walk.children(tree):
        yield from _calls_under_deadline(child, under or child is waited, names)


def _names_of_deadlines(scope: cst.CSTNode) -> frozenset[str]:
    """Names `scope` binds to a deadline set up away from the call it bounds
    (`budget = asyncio.timeout_at(deadline)`, entered later by `async with budget:`)."""
    return frozenset(
        target.target.value
        for node in walk.subtree(scope)
        if isinstance(node, cst.Assign) and isinstance(node.value, cst.Call) and is_deadline(node.value)
        for target in node.targets
        if isinstance(target.target, cst.Name)
    )


def _enters_deadline(node: cst.With, names: frozenset[str]) -> bool:
    return any(
        isinstance(item.item, cst.Call) and is_deadline(item.item)
        or isinstance(item.item, cst.Name) and item.item.value in names
        for item in node.items
    )


def _destinations(call: cst.Call) -> list[cst.BaseExpression]:
    """Where the call connects, as written: its first argument (`requests.get(url)`,
    `smtplib.SMTP(host, port)`, the host of `create_connection((host, port))`), or a
    `url=` / `host=` keyword."""
    found = [arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value in _DESTINATIONS]
    first = call.args[0].value if call.args and call.args[0].keyword is None else None
    if isinstance(first, cst.Tuple) and first.elements:
        first = first.elements[0].value
    return found + ([first] if first is not None else [])


def _client_keyword(arg: cst.Arg) -> bool:
    """An argument handing a client over by name: `http_client=`, `client=`, `session=`."""
    return arg.keyword is not None and bool(set(word_list(arg.keyword.value)) & _CLIENT_WORDS)


def _defined_names(module: cst.Module) -> frozenset[str]:
    """The functions and classes the module defines, at any depth: what it hands a client
    to can be read here."""
    return frozenset(node.name.value for node in walk.subtree(module)
                     if isinstance(node, (cst.FunctionDef, cst.ClassDef)))


def _is_command_line(module: cst.Module) -> bool:
    """A command-line program: it imports argparse, click or typer, or runs as `__main__`."""
    for statement in module.body:
        if isinstance(statement, cst.If) and "__main__" in _texts(statement.test):
            return True
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Import):
                    if any((dotted_name(a.name) or "").split(".")[0] in _CLI_MODULES for a in small.names):
                        return True
                elif isinstance(small, cst.ImportFrom) and small.module is not None:
                    if (dotted_name(small.module) or "").split(".")[0] in _CLI_MODULES:
                        return True
    return False


def _tested_not_empty(queue: cst.BaseExpression, guards: list[cst.BaseExpression]) -> bool:
    """`queue` is tested `not queue.empty()` (alone or joined by `and`) by an `if` or
    `while` whose body holds the read: the item is there, the read returns at once."""
    name = dotted_name(queue)
    return name is not None and any(
        isinstance(part, cst.UnaryOperation)
        and isinstance(part.operator, cst.Not)
        and isinstance(part.expression, cst.Call)
        and isinstance(part.expression.func, cst.Attribute)
        and part.expression.func.attr.value == "empty"
        and dotted_name(part.expression.func.value) == name
        for guard in guards
        for part in _conjuncts(guard)
    )


def _conjuncts(test: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The operands of `a and b and c`; the test itself otherwise."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return [*_conjuncts(test.left), *_conjuncts(test.right)]
    return [test]


def _texts(node: cst.CSTNode) -> list[str]:
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return [value] if isinstance(value, str) else []
    return [text for child in walk.children(node) for text in _texts(child)]


def _data_url(arg: cst.BaseExpression, tests: list[cst.BaseExpression]) -> bool:
    """`urlopen("data:...")`, or its argument tested with `.startswith("data:")` around it:
    a `data:` URL is decoded in memory, with no network."""
    if any(text.startswith("data:") for text in _texts(arg)):
        return True
    return isinstance(arg, cst.Name) and any(
        "data:" in "".join(_texts(test)) and arg.value in {n.value for n in walk.subtree(test) if isinstance(n, cst.Name)}
        for test in tests
    )

from __future__ import annotations

import libcst as cst

from nonatomic.rules.lint.base import Invalid, LintRule
from nonatomic.rules.lint.semantics import calls
from nonatomic.rules.lint.semantics.callees import CalleeProvider
from nonatomic.rules.lint.semantics.timeouts import load_specs
from nonatomic.rules.lint.tree import walk

DEFAULT_FIX_TIMEOUT = 30
_SESSION = "aiohttp.ClientSession"
_SESSION_REQUESTS = frozenset({"get", "post", "put", "patch", "delete", "head", "options", "request", "ws_connect"})


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
    own `http_client`, nor an `aiohttp.ClientSession` whose every request in the
    function passes its own `timeout=`.

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
        # A non-blocking queue read does not wait.
        """
        import queue
        q = queue.Queue()
        item = q.get(block=False)
        item = q.get(False)
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
    ]
    INVALID = [
        Invalid(
            """
            import requests
            requests.post('https://pay.example.com/refund', json=body)
            """,
            line=2,
            fixed="""
                import requests
                requests.post('https://pay.example.com/refund', json=body, timeout=30)
                """,
        ),
        Invalid("""
            from requests import post as p
            p(url)
            """, line=2, fixed="""
            from requests import post as p
            p(url, timeout=30)
            """),
        Invalid("""
            import requests
            requests.get(url, timeout=None)
            """, line=2, fixed="""
            import requests
            requests.get(url, timeout=30)
            """),
        Invalid(
            """
            import requests

            requests.put(
                url,
                json=body,
            )
            """,
            line=3,
            fixed="""
                import requests

                requests.put(
                    url,
                    json=body,
                    timeout=30,
                )
                """,
        ),
        # Sessions, however they are made and kept (ruff and bandit miss these).
        Invalid("""
            import requests
            s = requests.Session()
            s.post(url, json=body)
            """, line=3),
        Invalid("""
            import requests
            with requests.session() as s:
                s.get(url)
            """, line=3),
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
            """, line=3),
        Invalid("""
            import aiohttp
            t = aiohttp.ClientTimeout()
            """, line=2),
        # One request on the session without its own timeout is enough.
        Invalid(
            """
            import aiohttp
            async def f(url):
                session = aiohttp.ClientSession()
                await session.get(url, timeout=5)
                await session.post(url, json={})
            """,
            line=3,
        ),
        Invalid("""
            from urllib.request import urlopen
            urlopen(url)
            """, line=2),
        Invalid("""
            import smtplib
            server = smtplib.SMTP('smtp.example.com', 587)
            """, line=2),
        Invalid("""
            import socket
            socket.create_connection(('db', 5432))
            """, line=2),
        Invalid("""
            import subprocess
            subprocess.run(['kubectl', 'apply', '-f', 'x.yaml'], check=True)
            """, line=2),
        Invalid("""
            import subprocess
            p = subprocess.Popen(cmd)
            out, err = p.communicate()
            """, line=3),
        Invalid(
            """
            from concurrent.futures import ThreadPoolExecutor
            with ThreadPoolExecutor() as ex:
                fut = ex.submit(charge, order)
                fut.result()
            """,
            line=4,
        ),
        Invalid("""
            import concurrent.futures as cf
            ex = cf.ThreadPoolExecutor(4)
            ex.submit(f).result()
            """, line=3),
        Invalid("""
            import queue
            jobs = queue.Queue()
            def worker():
                job = jobs.get()
            """, line=4),
        Invalid("""
            from openai import OpenAI
            client = OpenAI()
            """, line=2),
        Invalid("""
            import anthropic
            client = anthropic.AsyncAnthropic(api_key=key)
            """, line=2),
        Invalid("""
            from langchain_anthropic import ChatAnthropic
            llm = ChatAnthropic(model='claude')
            """, line=2),
    ]

    def __init__(self, context=None) -> None:
        super().__init__(context)
        options = self.context.options
        self.specs = load_specs(options.get("extra-calls"))
        self.ignored = set(options.get("ignore-calls", ()))
        self.fix_timeout = options.get("fix-timeout", DEFAULT_FIX_TIMEOUT)

    def visit_Module(self, node: cst.Module) -> None:
        self._scopes: list[cst.CSTNode] = [node]
        self._bound: dict[int, str] = {}  # id(call) -> the name its result is bound to

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._scopes.append(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._scopes.pop()

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None and isinstance(node.asname.name, cst.Name):
            self._bind(node.item, node.asname.name.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            self._bind(node.value, node.targets[0].target.value)

    def _bind(self, value: cst.BaseExpression, name: str) -> None:
        value = value.expression if isinstance(value, cst.Await) else value
        if isinstance(value, cst.Call):
            self._bound[id(value)] = name

    def _requests_bounded(self, session: cst.Call) -> bool:
        """Every request made on the session in its function passes its own timeout (or
        **kwargs), and there is one: then the session needs none."""
        name = self._bound.get(id(session))
        requests = [
            node
            for node in walk.subtree(self._scopes[-1])
            if isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and isinstance(node.func.value, cst.Name)
            and node.func.value.value == name
            and node.func.attr.value in _SESSION_REQUESTS
        ]
        return bool(name and requests) and all(
            calls.has_star_kwargs(request)
            or ((given := calls.keyword(request, "timeout")) is not None and not calls.is_none(given.value))
            for request in requests
        )

    def visit_Call(self, node: cst.Call) -> None:
        callee = self.get_metadata(CalleeProvider, node, None)
        spec = self.specs.get(callee) if callee else None
        if spec is None or callee in self.ignored or calls.has_star_kwargs(node):
            return
        if spec.nonblocking is not None:
            flag = calls.argument(node, (spec.nonblocking[0],), spec.nonblocking[1])
            if flag is not None and calls.is_false(flag.value):
                return
        given = calls.argument(node, spec.keywords, spec.position)
        if given is None and calls.has_star_args(node) and spec.position is not None:
            return  # *args may reach the timeout's position
        explicit_none = given is not None and calls.is_none(given.value)
        if spec.when == "none":
            bad = explicit_none
        else:
            bad = given is None or explicit_none
        if not bad or (callee == _SESSION and not explicit_none and self._requests_bounded(node)):
            return
        short = callee.rsplit(".", 2)
        shown = ".".join(short[-2:]) if len(short) > 1 else callee
        what = "timeout=None" if explicit_none else "no timeout"
        replacement = None
        if spec.fixable:
            replacement = calls.with_keyword(
                node, spec.keywords[0], cst.Integer(str(self.fix_timeout))
            )
        self.report(
            node,
            f"`{shown}(...)` has {what}: {spec.why}",
            replacement=replacement,
            fix_title=f"Add `{spec.keywords[0]}={self.fix_timeout}`" if replacement else None,
        )

from __future__ import annotations

import re
from fnmatch import fnmatchcase

import libcst as cst

from nonatomic.rules.lint.base import Invalid, LintRule
from nonatomic.rules.lint.semantics import state
from nonatomic.rules.lint.semantics.callees import CalleeProvider, dotted_name
from nonatomic.rules.lint.semantics.confidence import test_module
from nonatomic.rules.lint.semantics.loops import asks_a_person
from nonatomic.rules.lint.semantics.names import word_list
from nonatomic.rules.lint.tree import walk

_MEMO = re.compile(r"cache|memo", re.IGNORECASE)
_Function = cst.FunctionDef | cst.Lambda
_RUNTIME = "<runtime>"


class MutableGlobalState(state.ScopeTracker, LintRule):
    """
    ## What it does
    Flags module-level mutable containers (dict, list and set literals and
    comprehensions, `dict()`/`list()`/`set()`, `defaultdict`, `OrderedDict`,
    `Counter`, `deque`, `ChainMap`, weak dictionaries) that a function mutates:
    item assignment or deletion, augmented item assignment, and mutating
    methods (`append`, `extend`, `update`, `setdefault`, `pop`, `clear`, `add`,
    `insert`, `remove`, ...). Also flags `global X` in a function that rebinds
    `X`. The finding names the global and the line that defines it.

    ## Why is this bad?
    A module global lives as long as the worker process and is shared by every
    request, task and agent run it serves. One real incident: a tool kept the
    payload of its last call in a module dict so a retry could resend it; two
    users' runs interleaved in one worker, the timeout-retry of the first sent
    the second user's payload, and the refund went to the wrong account. A
    global also keeps what a cancelled or timed-out run left behind: the next
    run starts with stale conversation history or a half-filled result.

    Memo caches (`_cache[key] = value`) are reported too, with their own
    advice: a memo of pure results is mostly safe but unbounded and better
    served by `functools.lru_cache`; a memo of anything per user or per
    request (tool results, credentials, conversation state) leaks across them.

    Not reported:
    - code that runs at import time: module top level, class bodies,
      `if __name__ == "__main__":` blocks (and functions defined there), and
      module-level functions that this module only calls or applies as a
      decorator at top level (never from inside a function);
    - registries filled by decorators: a function that hands back the
      function or class it was given (`def register(fn): REGISTRY[...] = fn;
      return fn`), and `__init_subclass__`/`__set_name__` hooks; they run when
      the decorated definition runs, normally once at import time, and class
      factories that register the class they define (`class _Session: ...`
      then `_SESSION_TYPES.append(_Session)`). A wrapper that records every
      call (the inner function of a decorator) is reported;
    - mutations inside `with <lock>:` (a name like `_lock`, `cache_guard`,
      `mutex`): the code knows the state is shared and serialises it;
    - names a function binds itself (a parameter or local of the same name),
      constants that are only read, tuples and frozensets, `__all__`,
      `functools.lru_cache`, `threading.local()` and `contextvars.ContextVar`.

    `global X` is reported once per function, at its first `global`
    statement, even when `X` only holds a flag (`_initialized =
    True`): a lazy-init check-then-set races when two requests arrive at once.
    Rebindings under a lock (double-checked locking) are not.

    ## Severity
    One finding per global, at its first mutation; its other sites are
    related locations (SARIF `relatedLocations`, "(and N more)" in the message).
    A warning when the state holds per-request data (user, session,
    conversation, request, order, customer, tenant, chat, message...: named so,
    by its head noun, or keyed or filled with it) and either mixes it (one list
    or slot for every run) or keeps it forever (entries keyed per session that
    nothing in the module removes: the message says it grows). `info` for
    per-request entries the module also takes out (a session registry with its
    teardown), for weak containers (a `WeakSet` of live sessions holds them only
    while their owners do), for records of ids read only by `in` (`if event.id in
    ANSWERED: return`: kept so that one run skips what another did), for memos (named so, or a lookup stored
    where it is looked up), for functions the module also runs at import time
    (a catalogue it reloads), for the state of a test module (one that defines
    `test_*` functions or a `TestCase`), and for lazy singletons, registries
    and config setters. A function named for doing something once (`show_warning_once`)
    is not reported.

    ## Example
    ```python
    _last_payload = {}

    def refund(order_id, amount):
        _last_payload["refund"] = {"order": order_id, "amount": amount}
        return payments.refund(order_id, amount)
    ```

    ## Use instead
    ```python
    from contextvars import ContextVar

    last_payload: ContextVar[dict | None] = ContextVar("last_payload", default=None)

    def refund(order_id, amount):
        last_payload.set({"order": order_id, "amount": amount})
        return payments.refund(order_id, amount)
    ```
    or keep the value in the agent's (graph's) state, which is per run.

    ## Options
    `[tool.nonatomic.mutable-global-state]`: `ignore-names`, glob patterns of
    global names never to report (e.g. `["_SCHEMA_CACHE"]`).
    """

    code = "NA301"
    METADATA_DEPENDENCIES = (CalleeProvider,)

    VALID = [
        # A class factory registers each class it makes (one per integration, at its import):
        # the list holds types, and each type keeps its own run state.
        """
            _SESSION_TYPES = []

            def new_session_type():
                class _Session:
                    _stack = []

                    def __enter__(self):
                        _Session._stack.append(self)
                        return self

                _SESSION_TYPES.append(_Session)
                return _Session

            def any_active():
                return any(t._stack for t in _SESSION_TYPES)
            """,
        # A warning shown once per process: the set that remembers it is shared on purpose.
        """
            import warnings

            SEEN_MESSAGES = set()

            def show_warning_once(message, idx):
                if idx not in SEEN_MESSAGES:
                    warnings.warn(message, stacklevel=3)
                    SEEN_MESSAGES.add(idx)
            """,
        # Only read.
        """
            LIMITS = {'refund': 500}
            def limit(tool):
                return LIMITS.get(tool, 0)
            """,
        # Immutable containers.
        """
            TOOLS = ('search', 'refund')
            ALLOWED = frozenset({'a'})
            def f(x):
                return x in TOOLS or x in ALLOWED
            """,
        # Filled at import time: module top level and the __main__ block.
        """
            SEEN = set()
            SEEN.add('boot')
            for name in ('a', 'b'):
                SEEN.add(name)
            """,
        """
            STATS = []
            if __name__ == '__main__':
                STATS.append(1)
            """,
        """
            STATS = []
            if __name__ == '__main__':
                def main():
                    STATS.append(1)
                main()
            """,
        # A parameter or a local of the same name is not the global.
        """
            cache = {}
            def f(cache):
                cache['k'] = 1
            """,
        """
            cache = {}
            def f():
                cache = {}
                cache['k'] = 1
                return cache
            """,
        """
            cache = {}
            def f():
                for cache in ({}, {}):
                    cache.clear()
            """,
        """
            items = []
            def outer():
                items = []
                def inner():
                    items.append(1)
                inner()
                return items
            """,
        # A mutating method on a different object of the same shape.
        """
            REGISTRY = {}
            def f(other):
                other.REGISTRY.update(x=1)
                other.append(REGISTRY)
            """,
        # A decorator that registers the function it is given (import time).
        """
            REGISTRY = {}
            def register(fn):
                REGISTRY[fn.__name__] = fn
                return fn
            """,
        """
            TOOLS = {}
            def tool(name):
                def deco(func):
                    TOOLS[name] = func
                    return func
                return deco
            @tool('refund')
            def refund(order):
                pass
            """,
        """
            HANDLERS = []
            def on_event(handler):
                HANDLERS.append(handler)
                return handler
            """,
        """
            PLUGINS = {}
            class Plugin:
                def __init_subclass__(cls, **kw):
                    PLUGINS[cls.__name__] = cls
            """,
        # A registry API: it stores the functions it is given, so clearing it is registry upkeep too.
        """
            _hooks = {}
            def register(point, hook):
                _hooks.setdefault(point, []).append(hook)
            def clear(point):
                _hooks.pop(point, None)
            """,
        """
            _factories = {}
            def add_factory(name, factory: Callable[[], Client]):
                _factories[name] = factory
            """,
        # The asyncio idiom that keeps background tasks referenced until they finish.
        """
            import asyncio
            _tasks = set()
            def spawn(coro):
                task = asyncio.create_task(coro)
                _tasks.add(task)
                task.add_done_callback(_tasks.discard)
            """,
        # Functions reached only from the `__main__` block run once, at start-up.
        """
            driver = None
            OPTIONS = {}
            def run(url):
                global driver
                driver = open_browser(url)
                OPTIONS['url'] = url
            def main():
                run('https://example.com')
            if __name__ == '__main__':
                main()
            """,
        # A setup function called only at module top level.
        """
            ROUTES = {}
            def setup():
                ROUTES['/'] = 'home'
            setup()
            """,
        """
            CONFIG = {}
            def load():
                global CONFIG
                CONFIG = {'debug': False}
            load()
            """,
        # Double-checked locking: the rebinding is serialised.
        """
            import threading
            _lock = threading.Lock()
            _client = None
            def client():
                global _client
                if _client is None:
                    with _lock:
                        if _client is None:
                            _client = make()
                return _client
            """,
        # `global` that only reads or mutates without rebinding is not a rebinding.
        """
            LEVEL = 1
            def show():
                global LEVEL
                print(LEVEL)
            """,
        # Deliberately shared and serialised by a lock.
        """
            import threading
            _lock = threading.Lock()
            _clients = {}
            def client(key):
                with _lock:
                    _clients[key] = make(key)
            """,
        # Per-request state done right.
        """
            import threading
            _local = threading.local()
            def f(x):
                _local.payload = x
            """,
        """
            from contextvars import ContextVar
            run_id = ContextVar('run_id', default=None)
            def f(x):
                run_id.set(x)
            """,
        """
            import functools
            @functools.lru_cache(maxsize=256)
            def schema(name):
                return load(name)
            """,
        # `__all__` is module metadata.
        """
            __all__ = []
            def export(obj, name):
                __all__.append(name)
            """,
        # Not a container: a Prometheus Counter, a queue.
        """
            from prometheus_client import Counter
            CALLS = Counter('calls', 'tool calls')
            def f():
                CALLS.inc()
            """,
        """
            import queue
            JOBS = queue.Queue()
            def f(job):
                JOBS.put(job)
            """,
        # A comprehension variable is local to the comprehension, the global is only read.
        """
            seen = {}
            def f(rows):
                return [seen.get(r) for r in rows]
            """,
        # Warn-once flags: shared on purpose, once per process.
        """

            import warnings

            _WARNED: set = set()

            def _warn_once(key, message):
                if key in _WARNED:
                    return
                _WARNED.add(key)
                warnings.warn(message, stacklevel=3)
            """,
        # PEP 562: the module's `__getattr__` caches what it imports lazily.
        """

            _model_cache: dict = {}

            def __getattr__(name):
                if name in _model_cache:
                    return _model_cache[name]
                from .models import load
                _model_cache[name] = load(name)
                return _model_cache[name]
            """,
        # A reset helper for tests, and a signal handler's exit flag.
        """

            import signal, sys

            _exiting = False
            _locks: dict = {}

            def _reset_cache_for_tests():
                \"\"\"Drop the cached locks (for tests).\"\"\"
                _locks.clear()

            def sigterm_handler(signum, frame):
                global _exiting
                _exiting = True
                sys.exit(0)

            signal.signal(signal.SIGTERM, sigterm_handler)
            """,
        # Documented as called with the lock held.
        """

            import threading

            _lock = threading.Lock()
            _state: dict = {}

            def _start_timer(deadline):
                \"\"\"Arm the idle timer. The caller holds the lock.\"\"\"
                _state["deadline"] = deadline
            """,
        # Named and documented for the lock its callers hold.
        """

            import threading

            _job_lock = threading.Lock()
            _next_ids: dict = {}

            def _next_id_locked(conversation_id):
                \"\"\"The next conversation-local id, while holding ``_job_lock``.\"\"\"
                job_id = _next_ids.get(conversation_id, 1)
                _next_ids[conversation_id] = job_id + 1
                return job_id
            """,
        # A helper this module calls only inside `with <lock>:`: its callers serialise it.
        """

            import threading

            _jobs_lock = threading.Lock()
            _jobs: dict = {}

            def _jobs_for(conversation_id):
                return _jobs.setdefault(conversation_id, {})

            def add_job(conversation_id, job):
                with _jobs_lock:
                    _jobs_for(conversation_id)[job.id] = job

            def get_job(conversation_id, job_id):
                with _jobs_lock:
                    return _jobs_for(conversation_id).get(job_id)
            """,
    ]
    INVALID = [
        # Sessions to the sub-servers a config names, opened once when the process starts: the
        # process's own, at info.
        Invalid("""
                from contextlib import AsyncExitStack

                servers_sessions: dict = {}

                async def initialize_sub_servers(stack: AsyncExitStack) -> None:
                    for server_name, params in settings.MCP_SERVERS.items():
                        session = await stack.enter_async_context(open_session(params))
                        servers_sessions[server_name] = session
                """, line=8, severity="info"),
        # A chat program for the person at its terminal: one person per process, so the users
        # it has seen are that run's, at info.
        Invalid("""
                import asyncio

                SEEN_USERS: list[str] = []

                def show(line: str) -> str:
                    nick, text = line.split(": ", 1)
                    if nick not in SEEN_USERS:
                        SEEN_USERS.append(nick)
                    return f"{nick}: {text}"

                async def main() -> None:
                    nick = input("Nickname: ").strip() or "anon"
                    async for line in connect(nick):
                        print(show(line))
                """, line=8, severity="info"),
        # A registry of the tools a server builder defines, looked up by name later: their
        # names (`acknowledge_message`, `request_contact`) say what they do, not what a
        # request holds, so it is process state at info.
        Invalid("""
                from fastmcp import FastMCP

                EXTENDED_TOOLS: dict = {}

                def build_server() -> FastMCP:
                    mcp = FastMCP("mail")

                    @mcp.tool
                    async def acknowledge_message(message_id: int) -> dict:
                        return {"acknowledged": message_id}

                    @mcp.tool
                    async def request_contact(agent: str) -> dict:
                        return {"requested": agent}

                    EXTENDED_TOOLS.update({
                        "acknowledge_message": acknowledge_message,
                        "request_contact": request_contact,
                    })
                    return mcp
                """, line=16, severity="info"),
        # A weak registry of live sessions (closed at exit): entries leave with their owners.
        Invalid("""
                import atexit
                import weakref

                _live_sessions = weakref.WeakSet()

                async def open_session(pool):
                    session = await pool.acquire()
                    _live_sessions.add(session)
                    return session

                @atexit.register
                def _close_all():
                    for session in list(_live_sessions):
                        session.close()
                """, line=8, severity="info"),
        # Chat history kept per session and never removed: it grows, per process.
        Invalid("""
                chat_contexts = {}

                class ChatContext:
                    def add(self, session_id, message):
                        if session_id not in chat_contexts:
                            chat_contexts[session_id] = []
                        chat_contexts[session_id].append(message)
                """, line=6),
        # A record of the events already answered, read only by `in`: one run skips what
        # another did, shared on purpose.
        Invalid("""
                from collections import deque
                ANSWERED = deque(maxlen=16)

                def on_sent(event):
                    ANSWERED.append(event.session.event_id)

                def on_message(session):
                    if session.event_id in ANSWERED:
                        return
                    reply(session)
                """, line=5, severity="info"),
        # The same record, but also read as a list: a run sees other sessions' entries.
        Invalid("""
                from collections import deque
                ANSWERED = deque(maxlen=16)

                def on_sent(event):
                    ANSWERED.append(event.session.event_id)

                def on_message(session):
                    if session.event_id in ANSWERED:
                        return
                    reply(session, list(ANSWERED))
                """, line=5),
        # A session registry its module also tears down: entries with a lifetime, reported at
        # the site that fills it.
        Invalid("""
                _session_owners = {}

                def forget_session(session_id):
                    _session_owners.pop(session_id, None)

                def claim_session(session_id, owner):
                    _session_owners[session_id] = owner
                """, line=7, severity="info"),
        # A lookup kept where it is looked up: a memo of users by their id.
        Invalid("""
                users_by_slack_id = {}

                async def get_user(slack_user_id):
                    if slack_user_id in users_by_slack_id:
                        return users_by_slack_id[slack_user_id]
                    user = User(identifier=f"slack_{slack_user_id}")
                    users_by_slack_id[slack_user_id] = user
                    return user
                """, line=7, severity="info"),
        # A catalogue the module loads at import time and reloads later.
        Invalid("""
                open_ai_chat_models = set()

                def _populate_model_sets():
                    for name, info in model_cost.items():
                        if info.get("provider") == "openai":
                            open_ai_chat_models.add(name)

                _populate_model_sets()

                def add_known_models():
                    _populate_model_sets()
                """, line=6, severity="info"),
        Invalid("""
                _last = {}
                def refund(order):
                    _last['refund'] = order
                """, line=3, severity="info"),
        Invalid("""
                _last = dict()
                def refund(order):
                    del _last['refund']
                """, line=3, severity="info"),
        Invalid("""
                totals = {}
                def add(user, n):
                    totals[user] += n
                """, line=3),
        Invalid("""
                history = []
                def remember(msg):
                    history.append(msg)
                    return msg
                """, line=3, severity="info"),
        Invalid("""
                from collections import defaultdict
                calls = defaultdict(list)
                def f(u):
                    calls[u].append(1)
                """, line=4, severity="info"),
        Invalid("""
                import collections
                seen = collections.OrderedDict()
                def f(k):
                    seen.move_to_end(k)
                """, line=4, severity="info"),
        Invalid("""
                from collections import Counter
                hits = Counter()
                def f(tool):
                    hits.update([tool])
                """, line=4, severity="info"),
        Invalid("""
                from collections import deque
                recent = deque(maxlen=10)
                def f(x):
                    recent.appendleft(x)
                """, line=4, severity="info"),
        Invalid("""
                pending = set()
                async def f(task_id):
                    pending.add(task_id)
                """, line=3, severity="info"),
        Invalid("""
                ids = {t for t in range(3)}
                def f(t):
                    ids.discard(t)
                """, line=3, severity="info"),
        Invalid("""
                state: dict[str, list] = {}
                def f(run):
                    state.setdefault(run, []).append(1)
                """, line=3, severity="info"),
        Invalid("""
                SESSIONS = {}
                def f(u):
                    SESSIONS[u]['history'].append(1)
                """, line=3),
        Invalid("""
                SESSIONS = {}
                def f(u):
                    SESSIONS.get(u).clear()
                """, line=3),
        Invalid("""
                a = b = []
                def f():
                    b.extend([1])
                """, line=3, severity="info"),
        # Nested functions and lambdas run at call time.
        Invalid("""
                out = []
                def run():
                    def cb(r):
                        out.append(r)
                    return cb
                """, line=4, severity="info"),
        Invalid("""
                results = []
                on_done = lambda r: results.append(r)
                """, line=2, severity="info"),
        # The inner wrapper of a decorator runs on every call.
        Invalid(
            """
                CALLS = []
                def track(fn):
                    def wrapper(*a):
                        CALLS.append(fn.__name__)
                        return fn(*a)
                    return wrapper
                """,
            line=4, severity="info"),
        # Called from a function as well as at top level: not only import time.
        Invalid("""
                ROUTES = {}
                def add(p):
                    ROUTES[p] = 1
                add('/')
                def handle(p):
                    add(p)
                """, line=3, severity="info"),
        # Filled once at import time, then written per request as well.
        Invalid("""
                CACHE = {}
                def warm():
                    CACHE['a'] = 1
                warm()
                def handle(k, v):
                    CACHE[k] = v
                """, line=6, severity="info"),
        # A registry of callables is exempt, a dict of per-request values is not.
        Invalid("""
                _runs = {}
                def register_run(run_id, result):
                    _runs[run_id] = result
                """, line=3, severity="info"),
        # A memo cache (reported, with its own advice).
        Invalid("""
                _cache = {}
                def get_schema(name):
                    if name not in _cache:
                        _cache[name] = build(name)
                    return _cache[name]
                """, line=4, severity="info"),
        # A memo keyed by a cache key is a memo, whatever it indexes (sessions here).
        Invalid("""
                _SESSION_INDEX = {}
                def project_sessions(root):
                    cache_key = str(root)
                    _SESSION_INDEX[cache_key] = scan(root)
                    return _SESSION_INDEX[cache_key]
                """, line=4, severity="info"),
        # The same helper called once outside the lock: not serialised.
        Invalid("""
                import threading

                _jobs_lock = threading.Lock()
                _jobs: dict = {}

                def _jobs_for(conversation_id):
                    return _jobs.setdefault(conversation_id, {})

                def add_job(conversation_id, job):
                    with _jobs_lock:
                        _jobs_for(conversation_id)[job.id] = job

                def count(conversation_id):
                    return len(_jobs_for(conversation_id))
                """, line=7),
        # A test module's list that a background task reports back to: the state of one test
        # run, which no request shares (info).
        Invalid("""
                from django.test import TransactionTestCase
                from background_task import background

                completed_messages = []

                @background(queue="named_queue")
                def record_message(message):
                    completed_messages.append(message)

                class NamedQueueTestCase(TransactionTestCase):
                    def test_process_queue(self):
                        record_message("test1")
                        self.assertIn("test1", completed_messages)
                """, line=8, severity="info"),
        # `global` rebinding, reported at the `global` statement.
        Invalid("""
                _client = None
                def client():
                    global _client
                    if _client is None:
                        _client = make()
                    return _client
                """, line=3, severity="info"),
        Invalid("""
                _initialized = False
                def init():
                    global _initialized
                    _initialized = True
                """, line=3, severity="info"),
        Invalid("""
                counter = 0
                def tick():
                    global counter
                    counter += 1
                """, line=3, severity="info"),
        Invalid("""
                def connect():
                    global conn
                    import sqlite3 as conn
                """, line=2, severity="info"),
        Invalid("""
                HISTORY = []
                def reset():
                    global HISTORY
                    HISTORY = []
                """, line=3, severity="info"),
        # One rebinding outside the lock is enough.
        Invalid(
            """
                _client = None
                def client():
                    global _client
                    with _lock:
                        _client = make()
                    _client.warm()
                    _client = None
                """,
            line=3, severity="info"),
        # Several `global` statements in one function: one finding, at the first.
        Invalid("""
                a = b = 0
                def f():
                    global a
                    global b
                    b = a = 1
                """, line=3, severity="info"),
    ]

    def __init__(self, context=None) -> None:
        super().__init__(context)
        self.ignored = tuple(self.context.options.get("ignore-names", ()))
        self._module_names = state.ScopeNames()
        self._containers: dict[str, tuple[str, cst.CSTNode]] = {}
        self._main_guard = 0
        self._names: dict[cst.CSTNode, state.ScopeNames] = {}
        self._top_level: set[cst.FunctionDef] = set()
        # Callee name -> names of the module-level functions calling it (None: import time,
        # _RUNTIME: a method, lambda or nested function).
        self._callers: dict[str, set[str | None]] = {}
        # Functions called (or applied) somewhere outside any `with <lock>:` block.
        self._called_unlocked: set[str] = set()
        self._mutations: list[tuple[cst.CSTNode, str, _Function]] = []
        self._registries: set[str] = set()  # globals that hold registered functions or classes
        self._reported_within: set[cst.CSTNode] = set()
        self._globals: list[tuple[cst.Global, cst.FunctionDef]] = []
        self._looked_up: dict[int, set[str]] = {}  # id(function) -> names it looks keys up in
        self._defined: set[str] | None = None  # the names of every def and class of the module, when asked
        self._asks_a_person = False  # the module prompts at a terminal (`input()`): a program for one person
        self._test_module = False

    # -- what the module defines ------------------------------------------------
    def visit_Module(self, node: cst.Module) -> None:
        self._module_names = state.scope_names(node)
        self._test_module = test_module(node)
        for name, value, _, statement in self._module_names.assignments:
            kind = state.container_kind(value, self._callee) if value is not None else None
            if kind is not None and name not in self._containers:
                self._containers[name] = (kind, statement)

    def _callee(self, call: cst.Call) -> str | None:
        return self.get_metadata(CalleeProvider, call, None)

    def _scope_names(self, node: cst.CSTNode) -> state.ScopeNames:
        if node not in self._names:
            self._names[node] = state.scope_names(node)
        return self._names[node]

    # -- where we are -----------------------------------------------------------
    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if not self.scopes:
            self._top_level.add(node)

    def visit_If_body(self, node: cst.If) -> None:
        if not self.scopes and state.is_main_guard(node):
            self._main_guard += 1

    def leave_If_body(self, node: cst.If) -> None:
        if not self.scopes and state.is_main_guard(node):
            self._main_guard -= 1

    def visit_Decorator(self, node: cst.Decorator) -> None:
        if isinstance(node.decorator, cst.Name):
            self._use(node.decorator.value)

    def _use(self, name: str) -> None:
        """Record who calls `name` (or applies it as a decorator)."""
        outer = next((s for s in self.scopes if not isinstance(s, cst.ClassDef)), None)
        if outer is None:
            caller = None
        elif outer in self._top_level and self.innermost_function() is outer:
            caller = outer.name.value
        else:
            caller = _RUNTIME
        self._callers.setdefault(name, set()).add(caller)
        if not self.locks_held:
            self._called_unlocked.add(name)

    # -- mutations ----------------------------------------------------------------
    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            for container in state.stored_containers(target.target):
                self._mutation(node, container)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        for container in state.stored_containers(node.target):
            self._mutation(node, container)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        for container in state.stored_containers(node.target):
            self._mutation(node, container)

    def visit_Del(self, node: cst.Del) -> None:
        for container in state.stored_containers(node.target):
            self._mutation(node, container)

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name):
            self._use(node.func.value)
        self._asks_a_person = self._asks_a_person or asks_a_person(node)
        self._note_task_holder(node)
        container = state.mutated_by_call(node)
        if container is None or node in self._reported_within:
            return
        # `X.setdefault(k, []).append(v)` is one mutation, reported once, at the outer call.
        self._reported_within.update(state.access_chain(node.func.value))
        self._mutation(node, container)

    def _note_task_holder(self, node: cst.Call) -> None:
        """`task.add_done_callback(TASKS.discard)`: the asyncio idiom that keeps a
        strong reference to background tasks until they finish."""
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "add_done_callback" and node.args:
            callback = node.args[0].value
            if (
                isinstance(callback, cst.Attribute)
                and callback.attr.value in ("discard", "remove")
                and isinstance(callback.value, cst.Name)
            ):
                self._registries.add(callback.value.value)

    def visit_Global(self, node: cst.Global) -> None:
        function = self.innermost_function()
        if isinstance(function, cst.FunctionDef) and not self._main_guard:
            self._globals.append((node, function))

    def _mutation(self, node: cst.CSTNode, container: cst.BaseExpression) -> None:
        if not isinstance(container, cst.Name) or container.value not in self._containers:
            return
        function = self.innermost_function()
        if function is None or self._main_guard or self.locks_held or self._skipped_name(container.value):
            return
        if self._is_global_in(container.value):
            self._mutations.append((node, container.value, function))
            if state.stores_callable(node, function):
                self._registries.add(container.value)

    def _is_global_in(self, name: str) -> bool:
        """Whether `name`, read in the innermost function, is the module's global."""
        for scope in reversed(self.scopes):
            if isinstance(scope, cst.ClassDef):
                continue  # class bodies do not enclose the functions in them
            names = self._scope_names(scope)
            if name in names.globals:
                return True
            if name in names.bound or name in names.nonlocals:
                return False
        return True

    def _skipped_name(self, name: str) -> bool:
        return name == "__all__" or any(fnmatchcase(name, pattern) for pattern in self.ignored)

    # -- reporting ------------------------------------------------------------------
    def leave_Module(self, original_node: cst.Module) -> None:
        for _, name, function in self._mutations:
            if self._registers(function):
                self._registries.add(name)
        # name -> its sites, in source order: one finding per global, at its first site.
        sites: dict[str, list[tuple[cst.CSTNode, _Function, bool]]] = {}
        for node, name, function in self._mutations:
            if name not in self._registries and not self._runs_at_import(function):
                sites.setdefault(name, []).append((node, function, False))
        for node, function in self._globals:
            if self._runs_at_import(function):
                continue
            names = self._scope_names(function)
            rebound = [
                name
                for name in names.globals
                if name in names.bound and not self._skipped_name(name)
            ]
            for name in sorted(_unlocked_rebindings(function, set(rebound))):
                if all(site[1] is not function for site in sites.get(name, [])):
                    sites.setdefault(name, []).append((node, function, True))
        # Globals whose first site is the same statement (`global a, b`) share one finding.
        kept = {
            name: [site for site in found if not state.shared_on_purpose(site[1]) and not self._only_locked(site[1])]
            for name, found in sites.items()
            if not state.once_flag(name)
        }
        # every line a message names, placed in one walk (one each would walk the tree per finding)
        self.place([
            *(site[0] for found in kept.values() for site in found),
            *(self._containers[name][1] for name in kept if name in self._containers),
            *(node for name in kept if (node := self._module_names.bound.get(name)) is not None),
            *(self._scope_names(site[1]).bound[name] for name, found in kept.items() for site in found
              if site[2] and name in self._scope_names(site[1]).bound),
        ])
        findings: dict[int, list[tuple[str, list[tuple[cst.CSTNode, _Function, bool]]]]] = {}
        for name, found in kept.items():
            if not found:
                continue
            # anchored where it is filled: a teardown's `pop` is where the state ends, not where it starts
            found.sort(key=lambda site: (state.removes(site[0]), self._line(site[0])))
            findings.setdefault(id(found[0][0]), []).append((name, found))
        for group in findings.values():
            node, function, rebinding = group[0][1][0]
            names = [name for name, _ in group]
            sites = [site for _, found in group for site in found]
            others = [site[0] for site in sites if site[0] is not node]
            keys: dict[str, set[str]] = {}  # what it is keyed by (`_sessions[user_id]`): source -> names
            stored: set[str] = set()  # what it is filled with (`history.append(msg)`)
            for name, found in group:
                for site in found:
                    for key, seen in state.keys_given(site[0], _named(name), self._containers.get(name, ("", None))[0]):
                        keys.setdefault(key, seen)
                    stored |= self._filled_with(site[0], original_node)
            # A `global` rebinding is a singleton, a flag or a setting, never a keyed store; a memo
            # (`_index[cache_key] = ...`, or a lookup stored where it is looked up) keeps what a
            # computation gave, whoever asked; a function the module also runs at import time
            # (re)loads its configuration.
            key_names = {n for seen in keys.values() for n in seen}
            memo = any(_MEMO.search(name) for name in {*names, *key_names}) or any(
                self._memoizes(site[0], site[1], name) for name, found in group for site in found)
            request = any(state.named_for_request_data(name) for name in names) or state.holds_request_data(
                key_names | stored)
            # A weak container (`WeakSet`, `WeakValueDictionary`) holds what others hold, as long
            # as they do: a registry of live objects, not a store a run fills.
            weak = any(self._containers.get(name, ("", None))[0].startswith("Weak") for name in names)
            # A test module's state serves its own test run, which no request or agent run shares.
            # A record of ids read only by `in` (`if event.sn in RECORD: return`) remembers what
            # any run did, so that another can skip it: shared on purpose.
            # A program that asks the person at its terminal serves that one person per process.
            quiet = rebinding or memo or not request or weak or self._test_module or self._asks_a_person \
                or self._reloads(function) or _lifecycle_hook(function) \
                or (not keys and all(_only_tested_for_membership(original_node, name, found) for name, found in group))
            # Per-request entries under their own keys do not mix; a module that also takes
            # them out gives them a lifetime.  Kept forever, they grow.
            kept_forever = bool(keys) and not any(state.removes(site[0]) for site in sites) and not weak
            if rebinding:
                message = self._global_message(names, function)
            elif keys and not quiet and kept_forever:
                message = self._growth_message(names[0], function, next(
                    (k for k, seen in keys.items() if state.holds_request_data(seen)), next(iter(keys))))
            else:
                message = self._mutation_message(names[0], function)
            self.report(
                node,
                message + _more(len(others)) + (" (in a test module)" if self._test_module else ""),
                severity=None if not quiet and (not keys or kept_forever) else "info",
                related=tuple(dict.fromkeys(others)),
            )

    def _reloads(self, function: _Function) -> bool:
        """A module function this module also calls at import time: it loads the module's
        configuration, and calling it again reloads it (`_populate_model_sets()`)."""
        return isinstance(function, cst.FunctionDef) and None in self._callers.get(function.name.value, ())

    def _memoizes(self, node: cst.CSTNode, function: _Function, name: str) -> bool:
        """`if key in NAME: return NAME[key]` ... `NAME[key] = user`: a lookup stored where it
        is looked up (a value computed, not an empty list to fill)."""
        if not isinstance(node, cst.Assign) or isinstance(node.value, state.LITERAL_CONTAINERS):
            return False
        if id(function) not in self._looked_up:
            self._looked_up[id(function)] = _looked_up_in(function)
        return name in self._looked_up[id(function)]

    def _filled_with(self, node: cst.CSTNode, module: cst.Module) -> set[str]:
        """The names a mutating call fills the container with (`history.append(user_msg)`), but
        not the functions and classes it registers (`tools.update({"send_message": send_message})`):
        their names say what they do, not what a request holds."""
        if not isinstance(node, cst.Call) or (isinstance(node.func, cst.Attribute)
                                              and node.func.attr.value in state.KEYED_METHODS):
            return set()
        filled = {n.value for arg in node.args[:1] for n in walk.subtree(arg.value) if isinstance(n, cst.Name)}
        if filled and self._defined is None:
            self._defined = {n.name.value for n in walk.subtree(module) if isinstance(n, (cst.FunctionDef, cst.ClassDef))}
        return filled - (self._defined or set())

    def _only_locked(self, function: _Function) -> bool:
        """A module function that this module calls, and only inside `with <lock>:`
        blocks: its writes are serialised by its callers' lock."""
        if not isinstance(function, cst.FunctionDef) or function not in self._top_level:
            return False
        name = function.name.value
        return name in self._callers and name not in self._called_unlocked

    def _registers(self, function: _Function) -> bool:
        """A decorator or class-creation hook: what it mutates is a registry."""
        return isinstance(function, cst.FunctionDef) and (
            function.name.value in state.CLASS_CREATION_HOOKS
            or state.is_registrar(function, self._scope_names(function))
        )

    def _runs_at_import(self, function: _Function) -> bool:
        return self._registers(function) or (
            function in self._top_level and self._startup_only(function.name.value, frozenset())
        )

    def _startup_only(self, name: str, seen: frozenset[str]) -> bool:
        """Whether every use of module-level function `name` in this module is at
        import time, directly or through functions that are themselves startup-only
        (`main()` called from the `__main__` block)."""
        callers = self._callers.get(name)
        if not callers or name in seen:
            return False
        return all(
            caller is None or (caller != _RUNTIME and self._startup_only(caller, seen | {name}))
            for caller in callers
        )

    def _line(self, node: cst.CSTNode) -> int:
        return self.line_of(node)

    @staticmethod
    def _where(function: _Function) -> str:
        return f"`{function.name.value}()`" if isinstance(function, cst.FunctionDef) else "a lambda"

    def _mutation_message(self, name: str, function: _Function) -> str:
        kind, statement = self._containers[name]
        head = (
            f"{self._where(function)} mutates module-level {kind} `{name}` "
            f"(defined at line {self._line(statement)}), shared by every request and run in the process"
        )
        if _MEMO.search(name):
            return (
                f"{head}: a memo of pure results belongs in `functools.lru_cache` (bounded); "
                "anything per user or per request belongs in a `ContextVar` or the agent state"
            )
        return f"{head}: keep per-run state in a `ContextVar` or the agent (graph) state"

    def _growth_message(self, name: str, function: _Function, key: str) -> str:
        kind, statement = self._containers[name]
        return (
            f"{self._where(function)} keeps entries keyed by `{key}` in module-level {kind} `{name}` "
            f"(defined at line {self._line(statement)}), and nothing in this module removes them: it grows "
            "with every one, each worker process has its own, and a restart loses them; keep them in the "
            "agent (graph) state or a store with expiry"
        )

    def _global_message(self, rebound: list[str], function: cst.FunctionDef) -> str:
        parts = []
        for name in rebound:
            defined = self._module_names.bound.get(name)
            where = f"defined at line {self._line(defined)}" if defined else "not defined at module level"
            parts.append(f"`{name}` ({where}; rebound at line {self._line(self._scope_names(function).bound[name])})")
        return (
            f"`{function.name.value}()` rebinds module-level {', '.join(parts)} through `global`: "
            "every request in the process sees the last writer's value, and a check-then-set "
            "(lazy init, once-flags) races; set it at import time, under a lock, or per run (`ContextVar`)"
        )


def _looked_up_in(function: _Function) -> set[str]:
    """The names a function looks keys up in: `... in NAME`, `NAME.get(...)`."""
    found = set()
    for inner in walk.subtree(function):
        if isinstance(inner, cst.Comparison):
            found |= {c.comparator.value for c in inner.comparisons
                      if isinstance(c.operator, (cst.In, cst.NotIn)) and isinstance(c.comparator, cst.Name)}
        elif (isinstance(inner, cst.Call) and isinstance(inner.func, cst.Attribute) and inner.func.attr.value == "get"
              and isinstance(inner.func.value, cst.Name)):
            found.add(inner.func.value.value)
    return found


def _named(name: str):
    """Recognises the global `name` itself (`X`, in `X[k]` and `X.pop(k)`)."""
    return lambda expr: isinstance(expr, cst.Name) and expr.value == name


def _more(count: int) -> str:
    """What a finding adds when the same global has other sites (its related locations)."""
    return f" (and {count} more)" if count else ""


class _UnlockedRebinding(cst.CSTVisitor):
    """The names of `names` a function body rebinds outside any `with <lock>:` block."""

    def __init__(self, names: set[str]) -> None:
        super().__init__()
        self.names = names
        self.found: set[str] = set()
        self._locks = 0

    def _defined(self, node: cst.FunctionDef | cst.ClassDef) -> bool:
        self._bind(node.name)  # `def X(): ...` rebinds X; its body is another scope
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    visit_FunctionDef = visit_ClassDef = _defined

    def visit_With(self, node: cst.With) -> None:
        self._locks += state.holds_lock(node)

    def leave_With(self, original_node: cst.With) -> None:
        self._locks -= state.holds_lock(original_node)

    def _bind(self, target: cst.BaseExpression) -> None:
        if not self._locks:
            self.found |= {name.value for name in state.target_names(target)} & self.names

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._bind(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._bind(node.target)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind(node.target)

    def visit_Del(self, node: cst.Del) -> None:
        self._bind(node.target)

    def visit_AsName(self, node: cst.AsName) -> None:  # `import x as n`, `with ... as n`, `except E as n`
        self._bind(node.name)

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        name = dotted_name(node.name)
        if node.asname is None and name and not self._locks:
            self.found |= {name.split(".")[0]} & self.names


def _unlocked_rebindings(function: cst.FunctionDef, names: set[str]) -> set[str]:
    """Double-checked locking (`with _lock: if X is None: X = make()`) serialises the
    rebinding: only rebindings outside a lock count."""
    visitor = _UnlockedRebinding(names)
    walk.visit(function.body, visitor)
    return visitor.found


def _only_tested_for_membership(module: cst.Module, name: str, sites: list) -> bool:
    """Every read of the global `name` outside its own mutations is `... in name` (or `not in`),
    and there is one: a record of what was seen, kept to be recognised again."""
    mutations = [site[0] for site in sites]
    definitions = {id(small) for statement in module.body if isinstance(statement, cst.SimpleStatementLine)
                   for small in statement.body if isinstance(small, (cst.Assign, cst.AnnAssign)) and any(
                       isinstance(target, cst.Name) and target.value == name for target in (
                           [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]))}
    tested = 0
    todo: list[cst.CSTNode] = list(module.body)
    while todo:
        node = todo.pop()
        if any(node is site for site in mutations) or isinstance(node, cst.Global):
            continue
        if isinstance(node, cst.Comparison) and len(node.comparisons) == 1 \
                and isinstance(node.comparisons[0].operator, (cst.In, cst.NotIn)) \
                and isinstance(node.comparisons[0].comparator, cst.Name) and node.comparisons[0].comparator.value == name:
            tested += 1
            todo.append(node.left)
            continue
        if isinstance(node, cst.Attribute):
            todo.append(node.value)  # `x.name` is another object's attribute
            continue
        if id(node) in definitions:
            continue  # its definition
        if isinstance(node, cst.Name) and node.value == name:
            return False
        todo.extend(walk.children(node))
    return tested > 0


def _lifecycle_hook(function: _Function) -> bool:
    """`_on_startup()`, `initialize_sub_servers(stack)`: named for the process's start or end and
    given no per-request data, it runs once per process; what it fills is the process's."""
    if not isinstance(function, cst.FunctionDef) or not set(word_list(function.name.value)) & state.LIFECYCLE_WORDS:
        return False
    params = function.params
    names = {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
    return not state.holds_request_data(names)

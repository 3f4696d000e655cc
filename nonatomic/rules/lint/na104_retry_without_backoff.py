from __future__ import annotations


import libcst as cst

from nonatomic.rules.lint.base import Invalid, LintRule
from nonatomic.rules.lint.semantics.confidence import INFERRED, severity, shape_note
from nonatomic.rules.lint.semantics.loops import asks_this_machine
from nonatomic.rules.lint.semantics.model import ModuleModel, RetryScope
from nonatomic.rules.lint.semantics.pacing import (
    FIXED,
    NONE,
    attempts_of,
    given_only,
    header,
    paced_scopes,
    reached_through,
    tenacity_setting,
    wait_of,
)
from nonatomic.rules.lint.semantics.retry import RetryProvider
from nonatomic.rules.lint.semantics.retryable import awaits_grant, conflicts_only, is_timeout
from nonatomic.rules.lint.semantics.tools import ToolRegistry

DEFAULT_FIX_MAX_WAIT = 30
# Attempts in all: two is one retry, after one wait, with nothing to grow.
_ONE_RETRY = 2


class RetryWithoutBackoff(LintRule):
    """
    ## What it does
    Flags a retry that starts the next attempt at once, or after the same
    fixed wait every time with no jitter: tenacity without `wait=` (or with
    `wait_fixed(...)` alone), `retrying.retry` without a wait or with
    `wait_fixed=` alone, the `retry` package without `delay` or with a fixed
    `delay` and no `backoff`/`jitter`, backoff's `constant` with `jitter=None`,
    LangChain `.with_retry(wait_exponential_jitter=False)`, a LangGraph
    `RetryPolicy(jitter=False, backoff_factor=1)`, and hand-written retry loops
    with no sleep or a `time.sleep(1)` whose length never changes.

    Exponential backoff counts even without jitter (it spreads retries out),
    and so does any wait the code computes (`sleep(delay)` where the loop grows
    `delay`, `sleep(backoff(attempt))`). backoff and stamina add jitter by
    default. Frameworks are read by their own settings and defaults: a Celery
    `countdown` (or its default delay without `retry_backoff`) is a fixed wait,
    as is a Temporal `backoff_coefficient=1.0`; Prefect, huey, rq and Dagster
    retry at once unless given a delay; urllib3 without `backoff_factor` too.
    Which retries are judged is shared with NA105: retries of work that
    leaves the machine, not polls of a read and not local computations, and
    not a construct told to stop after its first attempt
    (`stop_max_attempt_number=1`), which never goes round, nor one that makes
    two attempts at most (`stop_after_attempt(2)`, `range(RETRIES + 1)` with
    `RETRIES = 1` a constant): one retry has one wait, nothing to grow, and no
    wave follows it. A loop whose rounds each try another candidate, computed
    from the loop variable (`port = start + offset`), is a scan, not a retry;
    a loop of reads that goes round only while nothing listens yet
    (`ConnectError`, `ConnectionRefusedError`) waits for a server to start, and
    one of reads given what the function made just before it
    (`indices.create(index=name)`, then `search(index=name)` until it answers)
    waits for a new resource to be ready; a
    Celery `self.retry(eta=exc.retry_at)` waits as long as the server said. A
    loop or a retry construct that goes round only on a malformed answer that
    arrived (`except json.JSONDecodeError`,
    `retry_if_exception_type(ValidationError)`, an `OutputParserException`, a
    module tuple of such types), or on an error named for an invalid request
    (`PasswordHashInvalidError` when the user mistypes a password), is not
    flagged: it asks anew, and the remote side is neither failing nor
    overloaded. Nor is a Redis transaction run again after `WatchError`, or a retry only on an error named for a
    version conflict (`VersionMismatchError`, `StaleDataError`), at once or after
    a fixed wait (optimistic locking: another client's write got there first;
    NA105 still asks for a limit), nor a loop that goes round only while the
    server refuses for authorization and re-raises every other failure (it
    waits for a new access policy or key to propagate, not out an overload).
    An attempt that waits inside the module's own helper (`self._login()`,
    whose device-code poll sleeps at the server's interval) is paced by it.

    ## Why is this bad?
    Failures come in crowds: when a provider sheds load, every agent worker
    fails at the same moment. Retried at once, the failed calls come straight
    back and keep the provider down; retried after the same fixed second, they
    come back together, in waves, each wave as large as the first. A payment
    provider answering 503 under a morning peak saw its traffic triple from the
    agents' own retries, every `time.sleep(1)` beat in step, until the
    operators blocked the agent pool. Exponential backoff spreads attempts out
    in time; jitter spreads the clients apart.

    ## Severity
    A warning for a retry construct or a loop that counts its attempts; `info`
    for a loop taken for a retry from its shape alone (a `while` loop with no
    attempt count) or a retry in a test module, which the message says, for a
    loop whose attempt reaches
    the service only through the module's own helper (named in the message:
    what the helper does is read from its body), for a retry helper's loop
    around the callable it is given (`call_with_retry(fn)`: whether that
    reaches a service is up to its callers, which another module may hold,
    unless something names where it goes: a handler that catches or calls
    something named for a remote failure (`except ConnectionError`,
    `self._ensure_connection()`) or a client package's exception, or a helper
    or class named for a service, `transaction_retry`, `RetryingClient`), and
    for a loop that goes round only on a timeout: each attempt has already
    waited out its timeout, a fixed pace rather than none. A re-ask after a validation or parse error of
    the answer is not reported at all.

    ## Example
    ```python
    import time
    import requests

    def notify(body):
        for attempt in range(5):
            try:
                return requests.post(HOOK_URL, json=body, timeout=5)
            except requests.ConnectionError:
                time.sleep(1)
    ```

    ## Use instead
    ```python
    import random
    import time
    import requests

    def notify(body):
        for attempt in range(5):
            try:
                return requests.post(HOOK_URL, json=body, timeout=5)
            except requests.ConnectionError:
                time.sleep(random.uniform(0, min(30, 2 ** attempt)))  # full jitter
    ```
    With tenacity: `wait=wait_random_exponential(multiplier=1, max=30)`.

    ## Fix (unsafe)
    Adds `wait=wait_random_exponential(multiplier=1, max=<fix-max-wait>)` to a
    tenacity `@retry` decorator that has no `wait=` (with the import).
    Unsafe: the function now takes longer to fail.

    ## Options
    `[tool.nonatomic.retry-without-backoff]`: `fix-max-wait` (seconds, the cap
    the fix writes, default 30).
    """

    code = "NA104"
    METADATA_DEPENDENCIES = (RetryProvider,)

    VALID = [
        # Registering a gateway this process just started, until it listens: a fixed pace suits
        # a wait for this machine, where no crowd of clients failed together.
        """
            import subprocess

            import tenacity

            @tenacity.retry(wait=tenacity.wait_fixed(2), stop=tenacity.stop_after_attempt(10),
                            retry=tenacity.retry_if_exception_type(subprocess.CalledProcessError))
            def register_gateway(port: int) -> None:
                subprocess.run(["gateway-cli", "add", f"https://localhost:{port}", "--local"], check=True, timeout=30)
            """,
        # A read-modify-write of an IAM policy that goes round on an etag conflict (`Aborted`):
        # a fresh read resolves it, at once.
        """
            from google.api_core import exceptions
            from google.cloud import pubsub_v1

            def grant(credentials, topic, member, attempts=3):
                publisher = pubsub_v1.PublisherClient(credentials=credentials)
                tries = 0
                while tries < attempts:
                    tries += 1
                    try:
                        policy = publisher.get_iam_policy(request={"resource": topic})
                        policy.bindings.add(role="roles/pubsub.publisher", members=[member])
                        publisher.set_iam_policy(request={"resource": topic, "policy": policy})
                        return True
                    except exceptions.Aborted:
                        continue
                return False
            """,
        # A wait for a local port to be free: binding asks this machine, no service.
        """
            import asyncio
            import errno
            import socket

            async def wait_for_port(host, port):
                for attempt in range(20):
                    try:
                        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
                            sock.bind((host, port))
                        return
                    except OSError as e:
                        if e.errno != errno.EADDRINUSE:
                            raise
                        await asyncio.sleep(0.5)
            """,
        # A poll at a fixed interval: any failed answer leaves the loop (no retry to pace).
        """
            import asyncio
            import httpx

            async def wait_for_print(client: httpx.AsyncClient, job_id):
                while True:
                    response = await client.post("https://ppubs.example.com/api/print/print-process", json=[job_id])
                    if response.status_code != 200:
                        return None
                    if response.json()[0]["printStatus"] == "COMPLETED":
                        return response.json()
                    await asyncio.sleep(1)
            """,
        # A wait for the index its function just created: the loop reads it (going round on any
        # failure) until it answers, at the pace of its deadline; nothing is failing.
        """
            import time
            from opensearchpy import OpenSearch

            def create_collection(client: OpenSearch, name: str, settings: dict) -> None:
                client.indices.create(index=name, body=settings)
                for _ in range(180):
                    try:
                        client.search(index=name, body={"query": {"match_all": {}}})
                        return
                    except Exception:
                        time.sleep(0.5)
            """,
        # Two attempts at most: one retry, after one wait (here a reconnect), and no wave after it.
        """

            from anyio import ClosedResourceError
            from tenacity import retry, retry_if_exception_type, stop_after_attempt

            async def list_tools(session, recover_connection):
                @retry(retry=retry_if_exception_type(ClosedResourceError), stop=stop_after_attempt(2),
                       before_sleep=recover_connection, reraise=True)
                async def request_page():
                    return await session.list_tools()

                return await request_page()
            """,
        """

            import time
            import httpx

            _PLUGIN_READ_RETRIES = 1

            class Api:
                def _get_with_retry(self, client: httpx.Client, url, params=None):
                    attempts = _PLUGIN_READ_RETRIES + 1
                    for attempt in range(attempts):
                        try:
                            return client.get(url, params=params)
                        except (httpx.TimeoutException, httpx.NetworkError):
                            if attempt == attempts - 1:
                                raise
                            time.sleep(0.25)
            """,
        # A readiness probe: a read that goes round only while nothing listens yet.
        """

            import asyncio
            import httpx

            async def wait_for_server(url, max_retries=30, retry_delay=1):
                for attempt in range(max_retries):
                    try:
                        async with httpx.AsyncClient() as client:
                            await client.get(url, timeout=2.0)
                            return
                    except (httpx.ConnectError, httpx.ConnectTimeout):
                        if attempt == max_retries - 1:
                            raise
                        await asyncio.sleep(retry_delay)
            """,
        # A Celery retry at the time the server said its rate limit lifts: its pace, not a fixed one.
        """

            from celery import shared_task

            @shared_task(bind=True, max_retries=None)
            def send_messages(self, webhook_pk):
                webhook = Webhook.objects.get(pk=webhook_pk)
                message = webhook.dequeue_message()
                try:
                    webhook.send_message(message)
                except WebhookRateLimitExhausted as exc:
                    webhook.enqueue_message(message)
                    raise self.retry(eta=exc.retry_at, exc=exc)
            """,
        # A scan: each round tries the next port, computed from the loop variable.
        """

            import socket

            def find_available_port(starting_from=9222, max_attempts=10):
                for offset in range(max_attempts):
                    port = starting_from + offset
                    try:
                        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                            s.bind(("127.0.0.1", port))
                            return port
                    except OSError:
                        continue
            """,
        # Only the check of the answer is in the `try`: a model's data type validates it in
        # memory, and the run's own failures are not caught; a malformed answer is re-asked.
        """

            import time
            from openai.types.responses import Response

            class Responses:
                async def create(self, *, model, input, max_retries=5):
                    for attempt in range(max_retries):
                        result = None
                        async for result in self.agent.run(input):
                            break
                        try:
                            return Response.model_validate({"id": result["id"], "created_at": time.time(),
                                                            "model": model, "output": result["output"]})
                        except Exception:
                            if attempt == max_retries - 1:
                                raise
            """,
        # A retry told to stop after its first attempt never goes round: no wait to spread.
        """
            from retrying import retry

            @retry(stop_max_attempt_number=1, wait_fixed=4)
            def page(session, url):
                return session.get(url, timeout=10)
            """,
        # Each round asks for an unused port and starts the container on it: the round
        # that fails on a taken port is followed by another request, not a repeat.
        """
            def start_database(manager, image):
                attempts = 0
                while attempts < 3:
                    port = find_unused_port()
                    try:
                        return manager.create_container(image=image, ports={"5432/tcp": port})
                    except OSError:
                        attempts += 1
            """,
        # A sign-in that asks the user again after a wrong password: the server answered
        # about what was sent, it is not overloaded.
        """
            async def sign_in_with_password(client, phone, ask_password, tries=3):
                for _ in range(tries):
                    try:
                        secret = ask_password()
                        return await client.sign_in(phone=phone, password=secret)
                    except errors.PasswordHashInvalidError:
                        print("Wrong password, try again", file=sys.stderr)
                raise errors.PasswordHashInvalidError(request=None)
            """,
        # Exponential backoff with jitter, in each library's spelling.
        """
            from tenacity import retry, stop_after_attempt, wait_random_exponential

            @retry(stop=stop_after_attempt(5), wait=wait_random_exponential(multiplier=1, max=30))
            def open_ticket(crm, payload):
                return crm.create_ticket(payload)
            """,
        """
            from tenacity import retry, stop_after_attempt, wait_fixed, wait_random

            @retry(stop=stop_after_attempt(3), wait=wait_fixed(2) + wait_random(0, 1))
            def fetch(api, key):
                return api.get(key)
            """,
        """
            import backoff, requests

            @backoff.on_exception(backoff.constant, requests.RequestException, interval=2, max_tries=4)
            def fetch(url):
                return requests.get(url, timeout=5)
            """,
        """
            def build(prompt, llm):
                return (prompt | llm).with_retry(stop_after_attempt=4)
            """,
        # A hand-written loop whose wait grows with the attempt or is random.
        """
            import time, requests

            def post_event(body):
                for attempt in range(5):
                    try:
                        return requests.post(URL, json=body, timeout=5)
                    except requests.ConnectionError:
                        time.sleep(2 ** attempt)
            """,
        """
            import random, time

            def charge(gateway, card, key):
                delay = 0.5
                for _ in range(4):
                    try:
                        return gateway.charge(card, idempotency_key=key)
                    except TimeoutError:
                        time.sleep(delay)
                        delay *= 2
            """,
        """
            import random, time

            def charge(gateway, card, key):
                for _ in range(4):
                    try:
                        return gateway.charge(card, idempotency_key=key)
                    except TimeoutError:
                        time.sleep(random.uniform(0.5, 3))
            """,
        # A wait the loop delegates (`self._backoff(attempt)`).
        """
            def send(self, body):
                for attempt in range(3):
                    try:
                        return self.client.post('/x', json=body)
                    except IOError:
                        self._backoff(attempt)
            """,
        # Polling a read at a fixed interval.
        """
            import time

            def wait_for_refund(payments, refund_id):
                for _ in range(60):
                    refund = payments.get_refund(refund_id)
                    if refund.status == 'succeeded':
                        return refund
                    time.sleep(5)
            """,
        # Re-asking the model after a malformed answer is not a retry storm.
        """
            import json

            def extract(client, prompt):
                for _ in range(3):
                    try:
                        return json.loads(client.complete(prompt))
                    except json.JSONDecodeError:
                        continue
            """,
        # A retry construct that re-asks only when the answer does not validate.
        """

            import json

            from pydantic import ValidationError
            from tenacity import retry, retry_if_exception_type, stop_after_attempt

            PARSE_ERRORS = (ValidationError, json.JSONDecodeError)

            @retry(retry=retry_if_exception_type(PARSE_ERRORS), stop=stop_after_attempt(3))
            def extract_invoice(client, text):
                reply = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": text}])
                return Invoice.model_validate_json(reply.choices[0].message.content)

            @retry(retry=retry_if_exception_type(ValidationError) | retry_if_exception_type(json.JSONDecodeError),
                   stop=stop_after_attempt(2))
            def grade(llm, answer):
                return Grade.model_validate_json(llm.invoke(answer).content)
            """,
        # A local computation retried at once (a free port).
        """
            import socket

            def bind_free(sock, port):
                for attempt in range(10):
                    try:
                        return sock.bind(('127.0.0.1', port + attempt))
                    except OSError:
                        continue
            """,
        # Polling a read until it answers 200, the response held by `async with ... as`.
        """
            import asyncio

            import aiohttp

            async def wait_for_browser(json_url):
                async with aiohttp.ClientSession() as session:
                    for _ in range(10):
                        try:
                            async with session.get(json_url) as response:
                                if response.status == 200:
                                    return await response.json()
                        except Exception:
                            pass
                        await asyncio.sleep(0.5)
            """,
        # Each round sends a new name after a conflict: a search for a free name, not a retry.
        """
            import uuid

            class Experiment:
                def _create_project(self, client):
                    base = self._experiment_name
                    for _ in range(10):
                        try:
                            return client.create_project(self._experiment_name)
                        except ProjectNameTaken:
                            self._experiment_name = f"{base}-{uuid.uuid4().hex[:6]}"
            """,
        # A retry construct around a function named for local work: it repairs and parses text.
        """
            import json
            from tenacity import retry, stop_after_attempt, wait_fixed

            @retry(stop=stop_after_attempt(3), wait=wait_fixed(1))
            def retry_parse_json_text(output: str):
                return json.loads(repair_invalid_json(output))
            """,
        # Each round rebuilds the request from state the handler changed (compacted history).
        """
            import anthropic

            def turn(client, state):
                while True:
                    args = state.create_arguments()
                    try:
                        return client.messages.create(**args)
                    except anthropic.BadRequestError as e:
                        if not state.recovers_from(e):
                            raise
            """,
        # Frameworks told to back off.
        """

            import httpx
            from celery import shared_task

            @shared_task(autoretry_for=(IOError,), retry_backoff=True)
            def sync_contact(crm: httpx.Client, contact):
                crm.put(f"/contacts/{contact['id']}", json=contact)
            """,
        """

            from prefect import task
            from prefect.tasks import exponential_backoff

            @task(retries=4, retry_delay_seconds=exponential_backoff(backoff_factor=10))
            def create_ticket(crm, body, key):
                return crm.create_ticket(body, idempotency_key=key)
            """,
        """

            from dagster import Backoff, Jitter, RetryPolicy, op

            @op(retry_policy=RetryPolicy(max_retries=3, delay=2, backoff=Backoff.EXPONENTIAL, jitter=Jitter.PLUS_MINUS))
            def publish(context):
                BLOG_API.publish_post(context.op_config["post"], idempotency_key=context.run_id)
            """,
        # Optimistic locking by its own words: the loop WATCHes the key each round (the
        # exception comes from a helper), or its bound is named for it.
        """
            import redis.asyncio as aioredis

            async def acquire_lease(client: aioredis.Redis, key, owner):
                async with client.pipeline(transaction=True) as pipe:
                    for _ in range(3):
                        try:
                            await pipe.watch(key)
                            if await pipe.get(key):
                                return False
                            pipe.multi()
                            pipe.set(key, owner, ex=600)
                            await pipe.execute()
                            return True
                        except watch_error():
                            continue
                    return False

            async def renew(client: aioredis.Redis, key, owner):
                for _ in range(MAX_OPTIMISTIC_RETRY_COUNT):
                    try:
                        return await client.eval(RENEW, 1, key, owner)
                    except aioredis.ResponseError:
                        continue
            """,
        # The server says how long to wait (`retry_after` of a 429): its pacing, not a fixed wait.
        """
            import time
            from telebot.apihelper import ApiTelegramException

            def antiflood(function, *args, number_retries=5, **kwargs):
                for _ in range(number_retries - 1):
                    try:
                        return function(*args, **kwargs)
                    except ApiTelegramException as ex:
                        if ex.error_code == 429:
                            time.sleep(ex.result_json["parameters"]["retry_after"])
                        else:
                            raise
                return function(*args, **kwargs)
            """,
        # The handler repairs what the attempt failed on (a script the server lost) before
        # going round: no failing service to back off from.
        """
            import redis
            import redis.asyncio as aioredis

            class Script:
                async def execute(self, client: aioredis.Redis, keys, args):
                    for _ in range(3):
                        try:
                            return await client.evalsha(self._sha, len(keys), *keys, *args)
                        except redis.exceptions.NoScriptError:
                            await self.register(client)
                    raise RuntimeError("could not reload the script")
            """,
        # Redis optimistic locking: a transaction another client's write aborted (`WatchError`)
        # is run again at once, as the protocol has it; no service is failing.
        """
            import redis

            r = redis.Redis()

            def reserve(seat):
                with r.pipeline() as pipe:
                    for _ in range(10):
                        try:
                            pipe.watch(seat)
                            if pipe.get(seat) is None:
                                pipe.multi()
                                pipe.set(seat, "taken")
                                pipe.execute()
                            return
                        except redis.WatchError:
                            continue
            """,
        # Optimistic concurrency: a read retried when another writer moved the version on.
        """
            from tenacity import retry, retry_if_exception, stop_after_attempt, wait_fixed

            class VersionMismatchError(Exception):
                pass

            class SegmentAPI:
                @retry(
                    retry=retry_if_exception(lambda e: isinstance(e, VersionMismatchError)),
                    wait=wait_fixed(2),
                    stop=stop_after_attempt(5),
                    reraise=True,
                )
                def _get(self, collection_id):
                    return self._sysdb.get_collection(collection_id)
            """,
        # A readiness wait: the attempt asks the server whether it is up, and the wait's
        # deadline is counted in rounds of one second.
        """
            import time
            import httpx

            class Connection:
                def wait_for_server(self, startup_period: int) -> None:
                    for _ in range(startup_period):
                        try:
                            self._client.get("/.well-known/ready").raise_for_status()
                            return
                        except (httpx.ConnectError, httpx.HTTPStatusError):
                            time.sleep(1)
                    raise TimeoutError(f"the server did not start in {startup_period} s")
            """,
        """
            import time
            from opensearchpy import OpenSearch
            from opensearchpy.exceptions import ConnectionError

            def get_test_client(url):
                client = OpenSearch(url, timeout=30)
                for _ in range(100):
                    try:
                        client.cluster.health(wait_for_status="yellow")
                        return client
                    except ConnectionError:
                        time.sleep(0.1)
                raise RuntimeError("the cluster did not start")
            """,
        # A loop that asks a person again after a bad value: the person sets the pace.
        """
            import typer

            async def prompt_secrets(names, client):
                created = {}
                for name in names:
                    for attempt in range(1, 4):
                        try:
                            value = typer.prompt(f"Value for '{name}'", hide_input=True)
                            if not value.strip():
                                raise ValueError("empty value")
                            created[name] = await client.create_secret(name=name, value=value)
                            break
                        except Exception as e:
                            print(f"Error: {e}")
                return created
            """,
        # Waiting for a new access policy to reach the search cluster: it goes round only
        # while the cluster refuses for authorization, and re-raises any other failure.
        """
            import time
            import requests

            def create_index(cluster_url, name, mapping):
                for attempt in range(6):
                    try:
                        response = requests.put(f"{cluster_url}/{name}", json=mapping, timeout=30)
                        response.raise_for_status()
                        return response.json()
                    except Exception as exc:
                        if "security_exception" in str(exc).lower():
                            time.sleep(15)
                        else:
                            raise
                raise RuntimeError("the access policy never reached the cluster")
            """,
        # Each attempt is a whole device-code login whose token poll sleeps at the server's
        # interval: the attempt paces itself inside the class's own helpers.
        """
            import time
            import requests

            class DeviceLogin:
                def token(self):
                    for attempt in range(3):
                        try:
                            return self._login()
                        except LoginError:
                            continue
                    raise LoginError("no token after 3 logins")

                def _login(self):
                    code = requests.post(DEVICE_URL, data={"client_id": CLIENT_ID}, timeout=10).json()
                    print(f"Open {code['verification_uri']} and enter {code['user_code']}")
                    return self._poll(code["device_code"], code["interval"])

                def _poll(self, device_code, interval):
                    while True:
                        time.sleep(interval)
                        answer = requests.post(TOKEN_URL, data={"device_code": device_code}, timeout=10).json()
                        if "access_token" in answer:
                            return answer["access_token"]
            """,
        # The handler catches only what `raise_for_status()` raises, and the attempt never calls
        # it: `requests.get` does not raise `HTTPError`, so the loop never goes round.
        """
            import requests

            def resolve(doi_url):
                for _ in range(5):
                    try:
                        with requests.get(doi_url, timeout=30) as resolver:
                            return resolver.url
                    except requests.HTTPError:
                        continue
                raise LookupError(doi_url)
            """,
    ]
    INVALID = [
        # The same pacing around a send to a service: clients retry together.
        Invalid("""
            import asyncio
            import errno
            import socket

            async def send_greeting(host, port):
                for attempt in range(20):
                    try:
                        with socket.create_connection((host, port), timeout=5) as sock:
                            sock.sendall(b"HELLO")
                        return
                    except OSError as e:
                        if e.errno != errno.ECONNREFUSED:
                            raise
                        await asyncio.sleep(0.5)
            """, line=14),
        # The same loop going round on a failed answer: a retry at a fixed pace.
        Invalid("""
            import asyncio
            import httpx

            async def print_document(client: httpx.AsyncClient, document_id):
                while True:
                    response = await client.post("https://ppubs.example.com/api/print/submit", json=[document_id])
                    if response.status_code == 200:
                        return response.json()
                    await asyncio.sleep(1)
            """, line=9, severity="info"),
        # The same loop with the status check does go round on an error answer, at once.
        Invalid("""
                import requests

                def resolve(doi_url):
                    for _ in range(5):
                        try:
                            with requests.get(doi_url, timeout=30) as resolver:
                                resolver.raise_for_status()
                                return resolver.url
                        except requests.HTTPError:
                            continue
                    raise LookupError(doi_url)
                """, line=4),
        # A malformed answer raised inside the attempt is caught by the loop's own handler:
        # it goes round like any failure, not the end of a poll.
        Invalid("""
                import json
                import httpx

                def ask(base_url, payload):
                    for attempt in range(3):
                        try:
                            with httpx.Client(timeout=30) as client:
                                resp = client.post(f"{base_url}/chat/completions", json=payload)
                            resp.raise_for_status()
                            parsed = json.loads(resp.json()["choices"][0]["message"]["content"])
                            if not isinstance(parsed, dict):
                                raise ValueError("invalid model output")
                            return parsed
                        except Exception:
                            if attempt == 2:
                                raise
                """,
            line=5,
        ),
        # The attempt leaves the machine only through the class's own helper: what the helper
        # does is read from its body, so the finding is said at info, with the helper named.
        Invalid("""
                import requests

                class Crm:
                    def sync(self, contact):
                        for attempt in range(3):
                            try:
                                return self._push(contact)
                            except requests.RequestException:
                                pass

                    def _push(self, contact):
                        return requests.post(CRM_URL, json=contact, timeout=10)
                """,
            line=5, severity="info",
        ),
        # The same shape going round on a rate limit: that refusal says the server is loaded.
        Invalid("""
                import time
                import requests

                def create_index(cluster_url, name, mapping):
                    for attempt in range(6):
                        try:
                            response = requests.put(f"{cluster_url}/{name}", json=mapping, timeout=30)
                            response.raise_for_status()
                            return response.json()
                        except Exception as exc:
                            if "too_many_requests" in str(exc).lower():
                                time.sleep(15)
                            else:
                                raise
                """,
            line=12,
        ),
        # Going round only on a timeout: each attempt waited its timeout, a fixed pace (info).
        Invalid("""
                import requests

                def notify(url, event):
                    for attempt in range(3):
                        try:
                            return requests.post(f"{url}/events", json=event, timeout=5)
                        except requests.Timeout:
                            continue
                """, line=4, severity="info"),
        # A constant named like the server's header is still the module's own fixed wait.
        Invalid("""
                import time
                import requests

                RETRY_AFTER = 5

                def notify(session: requests.Session, url, event):
                    for attempt in range(4):
                        try:
                            return session.post(url, json=event, timeout=10)
                        except requests.ConnectionError:
                            time.sleep(RETRY_AFTER)
                """, line=11),
        # A health check before the write does not make the attempt a readiness wait.
        Invalid("""
                import time
                import requests

                def notify(session: requests.Session, url, event):
                    for attempt in range(4):
                        try:
                            session.get(f"{url}/health", timeout=2).raise_for_status()
                            return session.post(f"{url}/events", json=event, timeout=10)
                        except requests.ConnectionError:
                            time.sleep(2)
                """, line=10),
        # No retry word in sight: the loop's shape is the retry.
        Invalid(
            """
                import requests

                def fetch_quote(url):
                    while True:
                        try:
                            return requests.get(url, timeout=5).json()
                        except requests.ConnectionError:
                            continue
                """,
            line=4, severity="info"),
        Invalid(
            """
                from tenacity import retry, stop_after_attempt

                @retry(stop=stop_after_attempt(5))
                def open_ticket(crm, payload):
                    return crm.create_ticket(payload)
                """,
            line=3,
            fixed="""
                from tenacity import wait_random_exponential, retry, stop_after_attempt

                @retry(stop=stop_after_attempt(5), wait=wait_random_exponential(multiplier=1, max=30))
                def open_ticket(crm, payload):
                    return crm.create_ticket(payload)
                """,
        ),
        Invalid(
            """
                import tenacity

                @tenacity.retry()
                def refresh(api):
                    return api.get_token()
                """,
            line=3,
            fixed="""
                import tenacity

                @tenacity.retry(wait=tenacity.wait_random_exponential(multiplier=1, max=30))
                def refresh(api):
                    return api.get_token()
                """,
        ),
        # A fixed wait has no fix: only the author knows the intended pacing.
        Invalid(
            """
                from tenacity import retry, stop_after_attempt, wait_fixed

                @retry(stop=stop_after_attempt(5), wait=wait_fixed(2))
                def book(api, slot):
                    return api.book_room(slot)
                """,
            line=3,
        ),
        Invalid(
            """
                from retrying import retry

                @retry(stop_max_attempt_number=3, wait_fixed=2000)
                def cancel(api, order_id):
                    api.cancel_order(order_id)
                """,
            line=3,
        ),
        Invalid(
            """
                import backoff, requests

                @backoff.on_exception(backoff.constant, requests.RequestException, max_tries=5, jitter=None)
                def fetch(url):
                    return requests.get(url, timeout=5)
                """,
            line=3,
        ),
        Invalid(
            """
                def build(tool):
                    return tool.with_retry(wait_exponential_jitter=False, stop_after_attempt=3)
                """,
            line=2,
        ),
        # The fixed `time.sleep(1)` of a hand-written loop around a read of an HTTP API.
        Invalid(
            """
                import time, requests

                def rates(base):
                    for attempt in range(5):
                        try:
                            return requests.get('https://fx.example.com/rates', params={'base': base}, timeout=5)
                        except requests.RequestException:
                            time.sleep(1)
                """,
            line=8,
        ),
        # No wait at all: the retry helper goes straight round again.  What `fn` reaches
        # is its callers' choice (a helper applied to local work only is no storm): info.
        Invalid(
            """
                def call_with_retry(fn, attempts=3):
                    for attempt in range(attempts):
                        try:
                            return fn()
                        except Exception:
                            pass
                """,
            line=2, severity="info",
        ),
        # Unless its handler says the callable reaches a service: a broker's or a
        # connection's own retry helper, going round at once on a dropped connection.
        Invalid(
            """
                class Connection:
                    def ensure(self, fun, max_retries=None):
                        def _ensured(*args, **kwargs):
                            for retries in itertools.count(0):
                                try:
                                    return fun(*args, **kwargs)
                                except self.recoverable_connection_errors as exc:
                                    if max_retries is not None and retries >= max_retries:
                                        raise
                                    self._debug("ensure connection error: %r", exc)
                        return _ensured
                """,
            line=4,
        ),
        # Or the helper is named for the service it retries: a decorator for database work.
        Invalid(
            """
                import time

                def transaction_retry(max_retries=2):
                    def outer(fun):
                        def inner(*args, **kwargs):
                            for retries in range(max_retries + 1):
                                try:
                                    return fun(*args, **kwargs)
                                except Exception:
                                    time.sleep(1)
                        return inner
                    return outer
                """,
            line=10,
        ),
        # A fixed pause in a retry decorator: info for the same reason.
        Invalid(
            """
                import time
                from functools import wraps

                def retrying(max_attempts=3, delay=1):
                    def decorator(func):
                        @wraps(func)
                        def wrapper(*args, **kwargs):
                            attempts = 0
                            while attempts < max_attempts:
                                try:
                                    return func(*args, **kwargs)
                                except Exception:
                                    attempts += 1
                                    time.sleep(delay)
                        return wrapper
                    return decorator
                """,
            line=14, severity="info",
        ),
        # A constant named like a backoff is still a fixed wait.
        Invalid(
            """
                import asyncio
                RETRY_BACKOFF = 2

                async def refund(payments, order):
                    for _ in range(3):
                        try:
                            return await payments.refund(order.id, idempotency_key=order.key)
                        except TimeoutError:
                            await asyncio.sleep(RETRY_BACKOFF)
                """,
            line=9,
        ),
        # Celery's countdown is the same wait every time.
        Invalid("""

                from celery import shared_task

                @shared_task(bind=True, max_retries=5)
                def charge(self, gateway, order):
                    try:
                        return gateway.charge(order.card, idempotency_key=order.id)
                    except gateway.Timeout as exc:
                        raise self.retry(exc=exc, countdown=60)
                """, line=9),
        # Dagster's RetryPolicy without a delay retries at once.
        Invalid("""

                from dagster import RetryPolicy, op

                @op(retry_policy=RetryPolicy(max_retries=3))
                def publish(context):
                    BLOG_API.publish_post(context.op_config["post"])
                """, line=4),
        # A Temporal policy whose backoff coefficient is 1 waits the same every time.
        Invalid("""

                from datetime import timedelta
                from temporalio import workflow
                from temporalio.common import RetryPolicy

                def send_confirmation(order):
                    MAILER.send_email(order["email"], "confirmed")

                @workflow.defn
                class OrderWorkflow:
                    @workflow.run
                    async def run(self, order):
                        await workflow.execute_activity(
                            send_confirmation, order, start_to_close_timeout=timedelta(seconds=30),
                            retry_policy=RetryPolicy(maximum_attempts=5, backoff_coefficient=1.0),
                        )
                """, line=15),
        # One fixed-interval policy given to several activities: one finding, where it is set.
        Invalid("""

                from datetime import timedelta
                from temporalio import workflow
                from temporalio.common import RetryPolicy

                STEADY = RetryPolicy(initial_interval=timedelta(seconds=5), backoff_coefficient=1.0,
                                     maximum_attempts=5)

                def send_confirmation(order):
                    MAILER.send_email(order["email"], "confirmed")

                @workflow.defn
                class OrderWorkflow:
                    @workflow.run
                    async def run(self, order):
                        await workflow.execute_activity(send_confirmation, order, retry_policy=STEADY,
                                                        start_to_close_timeout=timedelta(seconds=30))
                        await workflow.start_activity(send_confirmation, order, retry_policy=STEADY,
                                                      start_to_close_timeout=timedelta(seconds=30))
                """, line=6),
    ]

    def __init__(self, context=None) -> None:
        super().__init__(context)
        settings = self.context.settings
        self.registry = ToolRegistry.for_table(settings.tools if settings is not None else None)
        self.fix_max_wait = int(self.context.options.get("fix-max-wait", DEFAULT_FIX_MAX_WAIT))

    def visit_Module(self, node: cst.Module) -> None:
        model = self.get_metadata(RetryProvider, node)
        seen: set[int] = set()  # a policy built once and given to several calls is one finding
        for scope in paced_scopes(model, self.registry):
            wait = wait_of(scope, model)
            if wait not in (NONE, FIXED) or conflicts_only(scope, model) or awaits_grant(scope):
                continue  # optimistic locking goes round at once, a grant is waited for at a steady pace
            if scope.kind == "decorator" and _asks_this_machine(scope, model):
                continue  # a wait for a server this machine starts: no crowd of clients to spread out
            attempts = attempts_of(scope, model)
            if attempts is not None and attempts <= _ONE_RETRY:
                continue  # one retry has one wait: nothing to grow, and no wave after it
            helper = reached_through(scope, model, self.registry)
            given = given_only(scope, model, self.registry)
            note = shape_note(scope) + (f" (its attempt reaches the service only through `{helper}`)" if helper else
                                        f" (it retries the `{given}` it is given, which its callers choose)" if given
                                        else "")
            level = INFERRED if helper or given else severity(None, [scope])
            if wait == NONE:
                self._no_wait(scope, note, level)
            elif id(at := _fixed_wait(scope)) not in seen:
                seen.add(id(at))
                self.report(
                    at,
                    f"{scope.label}{note} waits the same time before every attempt, with no jitter: "
                    "clients that failed together retry together, in waves; back off exponentially, with jitter",
                    severity=level,
                )

    def _no_wait(self, scope: RetryScope, note: str, level: str | None) -> None:
        args = f"multiplier=1, max={self.fix_max_wait}"
        fix = tenacity_setting(scope, "wait", "wait_random_exponential", args)
        if scope.kind == "loop" and scope.caught and all(is_timeout(name) for name in scope.caught):
            # Only timeouts go round: each failed attempt has already waited out its timeout,
            # a fixed pace rather than none.
            self.report(
                header(scope),
                f"{scope.label}{note} goes round on a timeout with no wait of its own: clients that "
                "timed out together retry together, each after its timeout; back off exponentially, with jitter",
                severity=INFERRED,
            )
            return
        self.report(
            header(scope),
            f"{scope.label}{note} starts the next attempt at once: every failed client retries "
            "immediately and keeps an overloaded service down; back off exponentially, with jitter",
            severity=level,
            replacement=fix[0] if fix else None,
            fix_title=f"Add `wait=wait_random_exponential({args})`" if fix else None,
            imports=fix[1] if fix else (),
        )


def _asks_this_machine(scope: RetryScope, model: ModuleModel) -> bool:
    """The decorated function calls only this machine's addresses (`https://localhost:8443`)."""
    function = next((facts.node for group in model.functions.values() for facts in group
                     if any(mine is scope for mine in facts.scopes)), None)
    return function is not None and asks_this_machine(function.body)


def _fixed_wait(scope: RetryScope) -> cst.CSTNode:
    """The fixed sleep of a loop, or the argument that sets a library's fixed wait."""
    if scope.kind == "loop":
        return scope.sleeps[0]
    setting = scope.config.get("wait") or scope.config.get("growth")
    return setting.value if setting is not None else header(scope)

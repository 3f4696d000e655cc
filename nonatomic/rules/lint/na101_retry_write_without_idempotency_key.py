from __future__ import annotations


import libcst as cst

from nonatomic.rules.lint.base import Invalid, LintRule
from nonatomic.rules.lint.semantics import calls
from nonatomic.rules.lint.semantics.confidence import INFERRED, severity, shape_note, write_note
from nonatomic.rules.lint.semantics.loops import not_applied_words
from nonatomic.rules.lint.semantics.model import ModuleModel, Retried, RetryScope
from nonatomic.rules.lint.semantics.pacing import adapts, one_attempt
from nonatomic.rules.lint.semantics.packs import load_pack
from nonatomic.rules.lint.semantics.retry import RetryProvider
from nonatomic.rules.lint.semantics.retryable import gives_up_on_timeout, module_constants, refused_only, undone_by
from nonatomic.rules.lint.semantics.tool_config import LEVELS
from nonatomic.rules.lint.semantics.tools import ToolRegistry


class RetryWriteWithoutIdempotencyKey(LintRule):
    """
    ## What it does
    Flags a write-tool call inside a retry scope that passes no idempotency key.
    Retry scopes are tenacity `@retry` and `Retrying` loops, backoff
    `on_exception`/`on_predicate`, stamina `retry`/`retry_context`,
    `retrying.retry`, LangChain `.with_retry()`, LangGraph nodes and tasks with a
    `RetryPolicy`, hand-written `for attempt in range(n)` / `while` loops that go
    round again on failure and stop on success, and the module's own retry
    helpers (`call_with_retry(lambda: crm.create_ticket(payload))`). Task queues,
    workflow engines, agent frameworks and transports retry too: Celery tasks
    with `autoretry_for` or `self.retry(...)`, Prefect `@task(retries=...)`,
    dramatiq actors, huey `retries=`, Temporal activities (by the server's default,
    `info`: the code that starts the activity, often another module, sets its
    policy; or by the `retry_policy` of the module's own `workflow.execute_activity`:
    `maximum_attempts=1` is one attempt), Dagster and rq retry
    policies, arq `raise Retry`, a pydantic-ai tool raising `ModelRetry` after its
    write, agno `Agent(retries=...)` (its tools), a requests Session with a
    urllib3 `Retry` that admits POST mounted, a Slack client with connection
    retry handlers (README: recognised retry constructs).

    A key counts when it is passed as a keyword (`idempotency_key=`,
    `ClientToken=`, `dedupe_key=`, ...), as a header (`Idempotency-Key`), or as a
    field of the payload, also through a local variable or a key parameter of
    the module's own tool function.  A write made conditional on the state it
    read counts too (`if_match=etag`, `ConditionExpression=...`, `kv.update(key,
    value, last=entry.revision)`: a compare-and-swap, whose repeat is refused
    once one attempt landed).

    ## Why is this bad?
    A timeout does not mean the write failed: the provider may have refunded the
    order and only the answer was lost. A support agent's refund tool was
    wrapped in `@retry(stop=stop_after_attempt(3))`; the payment API answered
    slowly during an incident, every attempt timed out on the client side, and
    each one went through on the server: one complaint, three refunds. With an
    idempotency key the provider recognises the second and third attempts as
    the same request and answers with the first result.

    Loops that iterate over work (`for user in users: try: send(user) except:
    continue`) are not retries, and retrying a read is harmless. A retry that
    only retries connection errors raised before the request left
    (`ConnectError`, `ConnectTimeout`) cannot repeat a side effect and is not
    flagged; nor is a loop that goes round only when the error says nothing was
    applied (`if "port is already allocated" not in str(e): raise`), one that asks
    for a fresh resource each round (`port = allocate_free_port()`), or one whose
    handler first looks the result up and adopts it when it is there.  Nor is a
    failover that records each candidate it tries and sends it (`tried.add(proxy)`,
    then `switch(proxy)`), or a poll whose first test leaves on any failed answer
    (`if r.status_code != 200: return`): only an answer that says "not yet" goes
    round.

    ## Severity
    An error when both links are seen at the site: a known write (the tool
    registry's table, a known SDK write, an HTTP write to a host that is not
    local, a write verb on an external client, a tool named for its write) in a
    known retry (a retry construct, or a loop that counts its attempts).  When a
    link is inferred (the write is reached through a module function, guessed
    from an overloaded verb, the loop was taken for a retry from its shape, or
    the retry helper or decorator is defined out of sight and known only by its
    name, `retry_k8s_api_call(...)`, which may retry only failures that sent
    nothing) the finding is `info`, and its message names the chain ("`_submit(...)` is a
    write (it calls `requests.post`)").

    A raw HTTP call is judged by its method. A PUT or DELETE is `info`: both
    are idempotent (RFC 9110), a repeat puts the same state or deletes what is
    gone; so is a PATCH that sets fields (`json={"in_trash": True}`: a repeat
    sets them again), though not one that sends a JSON Patch (a list of
    operations, whose `add` a repeat adds twice); so is a write named for the same act (`delete_many`, `upsert_row`),
    a POST that moves the one resource its URL names to a state (`POST
    f"{base}/tasks/{task_id}/complete"`, `/cancel`, `/archive`: a repeat finds
    it there),
    a write told to replace what is there (`upload_blob(name, data,
    overwrite=True)`, `update_one(filter, doc, upsert=True)`), and a database write whose statements only merge, update or delete what
    they name (Cypher `MERGE (n {id: $id}) SET n += $props`, `DETACH DELETE`,
    SQL `INSERT ... ON CONFLICT DO UPDATE`), given to the executor or run by the
    transaction function handed to it (`session.execute_write(upsert_node)`).
    A retry construct told to stop after its first attempt
    (`stop_max_attempt_number=1`, `stop_after_attempt(1)`) repeats nothing and
    is not reported; nor is a call that tells the module's own retry helper not
    to go round (`self._retrying(op, idempotent=False)`, `retries=0`), nor a
    loop that goes round only on an HTTP 429, which refuses the request
    unprocessed, and leaves on every exception. A write whose handler undoes the attempt before the retry
    (`self._rollback_partial_connect()`) is `info` as well: clean only if the
    undo reaches what the attempt did, which the code cannot show. So is a
    retry in a test module (one that defines `test_*` functions or a
    `TestCase`: its writes go to a test service), said "(in a test module)",
    and a write retried in a function whose name says it reads
    (`fetch_form_digest` posting for a token, `get_quote`: some APIs read by
    POST, and the author named what the call is for), which the message names.
    A POST through a generic client (`requests.post(url)`,
    `self._client.post(self.url)`) whose URL is not a literal naming the
    endpoint (nor a local or module constant bound once to one) is `info` too:
    the write is inferred from the verb, and POST is also how model calls and
    queries are sent.  A request helper whose method is a parameter defaulting
    to GET (`def _request(self, path, method="GET")`) sends no write when every
    call of it in the module reads: none passes another method, except from a
    function named for a read or a query (`search_patents`). A POST that asks a model or runs a query
    (its URL says `/chat/completions`, `/embeddings`, `/classify`, `/generate`,
    `/search`, `/graphql` without a `mutation`; `/v1/messages` or `/responses`
    with a `model` in the payload or sent by a function named for the model,
    `_call_model`; or its endpoint is named for one, `{base}/worker_generate_stream`;
    the function it is in is named `_classify`, `get_embeddings`, `search_docs`;
    or it is a method of a class named for a model, `ApigeeLlm`,
    `RemoteClassifier`) is not a write at all; nor is a POST that asks for
    credentials (its path or its function is named for a token, a login or a
    cookie, and for no write: `/oauth/token`, `_ensure_cookies`, not
    `revoke_token`).

    ## Example
    ```python
    import stripe
    from tenacity import retry, stop_after_attempt

    @retry(stop=stop_after_attempt(3))
    def refund_order(order):
        return stripe.Refund.create(payment_intent=order.payment_id, amount=order.total)
    ```

    ## Use instead
    ```python
    import stripe
    from tenacity import retry, stop_after_attempt

    @retry(stop=stop_after_attempt(3))
    def refund_order(order):
        return stripe.Refund.create(
            payment_intent=order.payment_id,
            amount=order.total,
            idempotency_key=f"refund-{order.id}",  # stable across attempts
        )
    ```
    The key must be the same on every attempt: derive it from the business
    operation (order id, ticket id), never from the clock or a fresh UUID
    (NA102).

    ## Options
    `[tool.nonatomic.retry-write-without-idempotency-key]`: `min-level` (`low`,
    `high` or `irreversible`; default `low`: every write) — writes below it are
    not flagged.  What is a write and how keys are spelled is the tool registry,
    `[tool.nonatomic.tools]` (`write`, `read`, `idempotency_keys`, `levels`).
    """

    code = "NA101"
    METADATA_DEPENDENCIES = (RetryProvider,)

    VALID = [
        # A local server that moves to the next port when its own is taken: the handler changes
        # the attribute the round's server is built from, so each round binds another port.
        """
            import asyncio

            class Daemon:
                async def start(self):
                    tries = 0
                    while tries <= self.retry_count:
                        try:
                            server = UDPServer((self.host, self.port), self.dispatcher, asyncio.get_event_loop())
                            await server.create_serve_endpoint()
                            return
                        except OSError as e:
                            if "Address already in use" not in str(e):
                                raise
                            self.port += 1
                            tries += 1
            """,
        # A static method of the module's own class, called through its class: its body says
        # what it does (here a local CLI step), not the verb of its name.
        """
            import random
            import subprocess
            import time

            class Migrations:
                @staticmethod
                def _create_baseline(path):
                    try:
                        subprocess.run(["migrate", "diff", "--from-empty", path], check=True, timeout=30)
                        return True
                    except subprocess.TimeoutExpired:
                        return False

                @staticmethod
                def setup(path):
                    for attempt in range(4):
                        try:
                            try:
                                subprocess.run(["migrate", "deploy"], check=True, timeout=60)
                                return True
                            except subprocess.CalledProcessError as e:
                                if "schema is not empty" in e.stderr:
                                    Migrations._create_baseline(path)
                                    return True
                                raise
                        except (subprocess.TimeoutExpired, subprocess.CalledProcessError):
                            time.sleep(random.randrange(5, 15))
            """,
        # A POST that asks for credentials: a repeat is issued another token.
        """
            import asyncio
            import httpx

            async def fetch_access_token(client: httpx.AsyncClient, credentials):
                for attempt in range(3):
                    try:
                        response = await client.post("https://auth.example.com/oauth/token", data=credentials)
                        return response.json()["access_token"]
                    except httpx.TransportError:
                        await asyncio.sleep(2 ** attempt)
            """,
        # Compare-and-swap: the write is conditional on the revision it read, so once one
        # attempt lands a repeat is refused (the next round re-reads and tries again).
        """
            from nats.js.errors import KeyWrongLastSequenceError
            from nats.js.kv import KeyValue

            async def increment(kv: KeyValue, key):
                for _ in range(5):
                    entry = await kv.get(key)
                    value = int(entry.value) + 1
                    try:
                        await kv.update(key, str(value).encode(), last=entry.revision)
                        return
                    except KeyWrongLastSequenceError:
                        continue
            """,
        # A failover: each round records the proxy it tries and switches to it, so the next
        # round sends another one.
        """
            import random
            import requests

            def switch_proxy(api_url, proxies, max_attempts=3):
                tried = set()
                attempts = 0
                while attempts < max_attempts:
                    candidate = random.choice([p for p in proxies if p not in tried])
                    tried.add(candidate)
                    attempts += 1
                    try:
                        resp = requests.post(f"{api_url}/proxies/select", json={"name": candidate}, timeout=10)
                        if resp.ok:
                            return True
                    except requests.RequestException:
                        continue
                return False
            """,
        # A POST to a model endpoint its module names in a constant: inference, not a write.
        """
            import asyncio
            import httpx

            API_URL = "https://openrouter.ai/api/v1/chat/completions"

            async def review(client: httpx.AsyncClient, payload):
                for attempt in range(3):
                    try:
                        return await client.post(API_URL, json=payload, timeout=30)
                    except httpx.TransportError:
                        await asyncio.sleep(2 ** attempt)
            """,
        # A request helper whose method is its callers' choice: every caller reads (a GET, or a
        # POST sent by a function named for a search), so its POST branch sends no write.
        """
            import httpx
            from tenacity import retry, retry_if_exception_type, stop_after_attempt

            class PatentClient:
                def __init__(self):
                    self.client = httpx.AsyncClient(base_url="https://api.example.com", timeout=30)

                @retry(stop=stop_after_attempt(3), retry=retry_if_exception_type(httpx.TimeoutException))
                async def _request(self, path, method="GET", data=None):
                    if method == "GET":
                        return await self.client.get(path)
                    return await self.client.post(path, json=data)

                async def get_patent(self, patent_id):
                    return await self._request(f"/patent/{patent_id}")

                async def search_patents(self, query):
                    return await self._request("/patent/", method="POST", data=query)
            """,
        # A poll: any failed answer leaves the loop, so only a job still printing goes round.
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
        # Round again only on a 429, which refuses the request unprocessed; any exception
        # (a timeout included) leaves: no attempt whose outcome is unknown is repeated.
        """

            import time
            import httpx

            def request_device_code(issuer, client_id):
                resp = None
                for attempt in range(1, 5):
                    try:
                        with httpx.Client(timeout=15.0) as client:
                            resp = client.post(f"{issuer}/api/accounts/deviceauth/usercode", json={"client_id": client_id})
                    except Exception as exc:
                        raise RuntimeError(f"Failed to request device code: {exc}") from exc
                    if resp.status_code != 429:
                        break
                    time.sleep(2 ** attempt)
                return resp
            """,
        # A model call through the SDK's raw-response accessor is inference, not a write.
        """

            import time
            from openai import OpenAI, RateLimitError

            class Llm:
                def __init__(self):
                    self.client = OpenAI(timeout=60)

                def complete(self, messages, model="gpt-4o"):
                    for _ in range(5):
                        try:
                            return self.client.chat.completions.with_raw_response.create(model=model, messages=messages)
                        except RateLimitError:
                            time.sleep(5)
            """,
        # The module's retry helper told not to go round for this call: it runs it once.
        """

            import asyncio

            class Drive:
                async def _retrying(self, op, *, label, idempotent=True):
                    attempts = 1
                    while True:
                        try:
                            return await op()
                        except Exception:
                            if not idempotent or attempts > 3:
                                raise
                            await asyncio.sleep(2 ** attempts)
                            attempts += 1

                async def start_upload(self, session_request):
                    return await self._retrying(lambda: self.api.send_raw(session_request), label="session",
                                                idempotent=False)
            """,
        # A retry told to stop after its first attempt never goes round: it retries nothing.
        """
            import requests
            from retrying import retry

            @retry(stop_max_attempt_number=1)
            def open_ticket(crm_url, body):
                return requests.post(f"{crm_url}/tickets", json=body, timeout=10)
            """,
        # The retry's test lets only conflicts through (409, 412): a commit the server turned down.
        """
            from huggingface_hub import HfApi
            from tenacity import retry, retry_if_exception, stop_after_attempt, wait_exponential

            def _is_commit_conflict(exc):
                return getattr(getattr(exc, "response", None), "status_code", None) in (409, 412)

            @retry(retry=retry_if_exception(_is_commit_conflict), wait=wait_exponential(max=30),
                   stop=stop_after_attempt(5))
            def push(api: HfApi, repo, operations):
                api.create_commit(repo_id=repo, operations=operations, commit_message="load")
            """,
        # It goes round only when the error says the port it asked for was taken: the
        # container was refused, nothing was made.
        """
            import time

            def start_worker(manager, image, port):
                for _ in range(5):
                    try:
                        return manager.create_container(image=image, host_port=port)
                    except RuntimeError as error:
                        if "port is already allocated" not in str(error).lower():
                            raise
                        time.sleep(2)
            """,
        # Each round asks for a free port and starts the container on it: the round
        # that fails on a taken port is followed by another request, not a repeat.
        """
            def start_sandbox(manager, image):
                for _ in range(3):
                    port = allocate_free_port()
                    try:
                        return manager.create_container(image=image, host_port=port)
                    except RuntimeError as error:
                        if "port" not in str(error):
                            raise
            """,
        # The handler keeps the server's clock, the next round signs a new handshake with it
        # and opens a new socket on it: what the round sends is built from what changed.
        """
            def open_bridge(factory, host, key, topic):
                server_ts = None
                for _ in range(2):
                    nonce = make_nonce(server_ts or now_ms())
                    url = f"wss://{host}/v2/{sign(key, nonce).hex()}"
                    socket = factory(url)
                    try:
                        token = wait_for_token(socket)
                        socket.send_binary(encode_filter([topic]))
                        return token
                    except StaleNonceError as error:
                        server_ts = error.server_ts
                    finally:
                        socket.close()
            """,
        # Building the request a stub then sends: the builder writes nothing.
        """
            from tenacity import retry, stop_after_attempt

            class Handler:
                @retry(stop=stop_after_attempt(3))
                def drop_database(self, name):
                    request = Prepare.drop_database_req(name)
                    return self._send(request)

                @retry(stop=stop_after_attempt(3))
                def create_database(self, name):
                    request = RequestBuilder.create_database(name)
                    return self._send(request)
            """,
        # A class's own factory, named for what the class is, makes an object in memory.
        """
            from tenacity import retry, stop_after_attempt

            @retry(stop=stop_after_attempt(3))
            def open_camera(device):
                source = media.VideoSource(device.width, device.height)
                return media.LocalVideoTrack.create_video_track("camera", source)
            """,
        # A generate-run-debug loop: each round runs the code the model wrote that round.
        """
            async def code_and_debug(model_client, code_executor, context, max_rounds=3):
                for i in range(max_rounds):
                    reply = await model_client.create(messages=context)
                    blocks = extract_code_blocks(reply.content)
                    try:
                        for block in blocks:
                            result = await code_executor.execute_code_blocks([block])
                            context.append(result.output)
                        break
                    except TimeoutError:
                        context.append("Code execution timed out.")
            """,
        # A retry on a name conflict, under a new name each round: the conflicting create
        # applied nothing, and a timeout is not retried.
        """
            import uuid

            class Experiment:
                def _create_project(self, client, dataset_id):
                    base = self._experiment_name
                    for _ in range(10):
                        try:
                            return client.create_project(self._experiment_name, reference_dataset_id=dataset_id)
                        except LangSmithConflictError:
                            self._experiment_name = f"{base}-{uuid.uuid4().hex[:6]}"
                    raise ValueError("no unique experiment name")
            """,
        # Subscribing a local consumer to its topics, retried until it works: pub/sub plumbing.
        """
            from confluent_kafka import Consumer

            def consume(config, topics, stop_event):
                def make_consumer():
                    consumer = Consumer(config)
                    consumer.subscribe(topics)
                    return consumer

                return retry_until_success(stop_event, make_consumer, "create the consumer")

            def retry_until_success(stop_event, func, what):
                while not stop_event.is_set():
                    try:
                        return func()
                    except Exception:
                        stop_event.wait(1)
            """,
        # A POST that asks a model a question (`aask`), retried on 429s and 5xx.
        """
            import asyncio, random

            import aiohttp

            class DecisionModel:
                _session: aiohttp.ClientSession

                async def aask(self, state, questions):
                    body = {"state": state, "model": self.name, "questions": questions}
                    for attempt in range(self.retries + 1):
                        try:
                            async with self._session.post(self.url, json=body) as r:
                                return (await r.json())["answers"]
                        except aiohttp.ClientError:
                            await asyncio.sleep(0.25 * 2**attempt * (1 + random.random()))
            """,
        # A handler that re-raises unless the database refused the statement (a deadlock, a
        # lock wait that timed out): a rolled-back transaction applied nothing.
        """
            import asyncio

            async def update_spend(db, rows, n_retry_times=3):
                for i in range(n_retry_times + 1):
                    try:
                        async with db.tx() as tx:
                            await tx.insert_spend_rows(rows)
                        break
                    except Exception as e:
                        is_retryable = is_deadlock_error(e) or is_lock_timeout_error(e)
                        if not is_retryable:
                            raise
                        await asyncio.sleep(2 ** i)
            """,
        # Going round only while the service refuses the caller (a permission not yet
        # propagated), re-raising anything else.
        """
            import time

            def create_index(client, name, body):
                for attempt in range(8):
                    try:
                        client.indices.create_index_alias(index=name, body=body)
                        return
                    except Exception as e:
                        if "authorization_exception" in str(e).lower():
                            time.sleep(20)
                        else:
                            raise
            """,
        # Rows written with duplicates skipped: a repeat inserts nothing more.
        """
            from tenacity import retry, stop_after_attempt

            @retry(stop=stop_after_attempt(3))
            async def index_calls(db, rows):
                await db.tool_calls.create_many(data=rows, skip_duplicates=True)
            """,
        # A retry only on the exceptions the author lists as safe to retry (nothing was sent).
        """
            from app.errors import DB_RETRY_SAFE_ERROR_TYPES

            async def flush(db, rows, retries=3):
                for attempt in range(retries + 1):
                    try:
                        async with db.tx() as tx:
                            await tx.insert_spend_rows(rows)
                        return
                    except DB_RETRY_SAFE_ERROR_TYPES:
                        if attempt >= retries:
                            raise
            """,
        # A statement executor given a statement that only reads: `USE <space>` polled until
        # a space created just before becomes visible (the create is outside the loop).
        """
            import time

            def open_session(pool, space):
                session = pool.get_session("root", "secret")
                session.execute(f"CREATE SPACE IF NOT EXISTS {space} (vid_type=FIXED_STRING(30));")
                for attempt in range(3):
                    res = session.execute(f"USE {space};")
                    if res.is_succeeded():
                        return session
                    time.sleep(1)
                raise RuntimeError(f"space {space} never became usable")
            """,
        # The key is a keyword, a header, or a payload field.
        """
            import stripe
            from tenacity import retry

            @retry
            def refund(order):
                stripe.Refund.create(payment_intent=order.pi, idempotency_key=f'refund-{order.id}')
            """,
        """
            import requests
            from tenacity import retry, stop_after_attempt

            @retry(stop=stop_after_attempt(3))
            def open_ticket(body, key):
                headers = {'Idempotency-Key': key}
                return requests.post('https://crm.example.com/tickets', json=body, headers=headers, timeout=10)
            """,
        """
            import backoff, requests

            @backoff.on_exception(backoff.expo, requests.RequestException, max_tries=5)
            def create_order(cart):
                payload = dict(items=cart.items)
                payload['dedupe_key'] = cart.id
                return requests.post(URL, json=payload, timeout=5)
            """,
        # A read may be retried.
        """
            from tenacity import retry

            @retry
            def load(client, order_id):
                return client.orders.get(order_id)
            """,
        # Iteration over work, not a retry.
        """
            import time

            def notify_all(mailer, users):
                for user in users:
                    try:
                        mailer.send_email(user.email, 'hi')
                    except OSError:
                        time.sleep(1)
                        continue
            """,
        # Index iteration with a counter is iteration too.
        """
            import time

            def push(api, batches):
                for i in range(len(batches)):
                    try:
                        api.create_batch(batches[i])
                    except OSError:
                        time.sleep(1)
            """,
        # A worker loop goes on after a success: not a retry.
        """
            import time

            def heartbeat(api):
                while True:
                    try:
                        api.post_heartbeat()
                    except OSError:
                        pass
                    time.sleep(10)
            """,
        # Container and in-process look-alikes inside a retry.
        """
            from tenacity import retry

            @retry
            def step(state, cache, lock, items, logger):
                state.update({'n': 1})
                cache.set('k', 1)
                items.append(1)
                lock.release()
                logger.info('sent')
                return dict(a=1)
            """,
        # Connection errors happen before the request is sent.
        """
            import httpx
            from tenacity import retry, retry_if_exception_type

            @retry(retry=retry_if_exception_type(httpx.ConnectError))
            def send(client, body):
                return client.post('https://hooks.example.com/x', json=body)
            """,
        # A local service is not an external side effect.
        """
            import requests
            from tenacity import retry

            @retry
            def warm():
                requests.post('http://localhost:8080/warmup', timeout=2)
            """,
        # A handler that always re-raises stops the loop: no retry.
        """
            def charge_once(gateway, card):
                for attempt in range(3):
                    try:
                        return gateway.charge(card)
                    except Exception:
                        raise
            """,
        # Polling a read until it is visible.
        """
            import time

            def wait_done(api, job_id):
                while True:
                    job = api.get_job(job_id)
                    if job.done:
                        return job
                    time.sleep(5)
            """,
        # `.with_retry()` on a chain of model calls, not on a write tool.
        """
            def build(prompt, llm):
                return (prompt | llm).with_retry(stop_after_attempt=3)
            """,
        # A key parameter of the module's own tool reaches its write.
        """
            import stripe
            from tenacity import retry

            def refund_payment(pi, idempotency_key):
                return stripe.Refund.create(payment_intent=pi, idempotency_key=idempotency_key)

            @retry
            def handle(pi, key):
                refund_payment(pi, key)
            """,
        # Each round creates something else: the handler changes the name it sends.
        """
            def create_branch(repo, name, sha):
                candidate = name
                for i in range(100):
                    try:
                        return repo.create_git_ref(ref=f'refs/heads/{candidate}', sha=sha)
                    except GithubException as e:
                        if e.status != 422:
                            raise
                        candidate = f'{name}_v{i + 1}'
            """,
        # Framework retries around keyed writes, and framework settings that retry nothing.
        """

            from celery import shared_task
            import stripe

            @shared_task(autoretry_for=(stripe.error.APIConnectionError,), retry_backoff=True)
            def refund(order_id, charge_id):
                stripe.Refund.create(charge=charge_id, idempotency_key=f"refund-{order_id}")
            """,
        """

            from celery import shared_task

            @shared_task(bind=True, max_retries=3)  # no autoretry_for, no self.retry: never retried
            def send_receipt(self, mailer, order):
                mailer.send_email(order.email, "receipt")
            """,
        # Task queues told not to retry, or not told to.
        """

            import dramatiq
            from huey import RedisHuey
            from rq import Queue

            huey = RedisHuey("mail")

            @dramatiq.actor(max_retries=0)
            def send_welcome(mailer, user):
                mailer.send_email(user.email, "welcome")

            @huey.task()
            def send_digest(mailer, user):
                mailer.send_email(user.email, "digest")

            def schedule(redis_conn, user):
                Queue(connection=redis_conn).enqueue(send_welcome, user)
            """,
        """

            from prefect import task

            @task(retries=0)
            def create_ticket(crm, body):
                return crm.create_ticket(body)
            """,
        """

            from pydantic_ai import Agent, ModelRetry

            agent = Agent("openai:gpt-4o")

            @agent.tool_plain
            def send_email(to: str, body: str) -> str:
                if "@" not in to:
                    raise ModelRetry("not an address")  # raised before the write: nothing repeated
                MAILER.send_email(to, body)
                return "sent"
            """,
        # httpx's transport retries connection failures only, before a request is sent.
        """

            import httpx

            client = httpx.Client(transport=httpx.HTTPTransport(retries=3), timeout=10)

            def open_ticket(body):
                return client.post("https://crm.example.com/tickets", json=body)
            """,
        # stripe's own network retries send the idempotency key the SDK adds.
        """

            import stripe

            stripe.max_network_retries = 2

            def refund(charge_id):
                return stripe.Refund.create(charge=charge_id)
            """,
        # botocore retries with the ClientToken it fills; SQS FIFO deduplicates by id.
        """

            import boto3
            from botocore.config import Config

            ec2 = boto3.client("ec2", config=Config(retries={"max_attempts": 10, "mode": "standard"}))
            sqs = boto3.client("sqs")

            def launch(ami):
                return ec2.run_instances(ImageId=ami, MinCount=1, MaxCount=1)

            def enqueue(url, body, order_id):
                sqs.send_message(QueueUrl=url, MessageBody=body, MessageGroupId="orders",
                                 MessageDeduplicationId=order_id)
            """,
        # urllib3's default Retry leaves POST alone; a rate-limit handler retries a refused request.
        """

            import requests
            from requests.adapters import HTTPAdapter
            from urllib3.util.retry import Retry
            from slack_sdk import WebClient
            from slack_sdk.http_retry import RateLimitErrorRetryHandler

            session = requests.Session()
            session.mount("https://", HTTPAdapter(max_retries=Retry(total=3, backoff_factor=0.5)))
            slack = WebClient(token=TOKEN, retry_handlers=[RateLimitErrorRetryHandler(max_retry_count=2)])

            def notify(body):
                session.post("https://hooks.example.com/x", json=body, timeout=5)
                slack.chat_postMessage(channel="#ops", text=body["text"])
            """,
        # An MCP client calling a read tool by name.
        """

            from tenacity import retry, stop_after_attempt, wait_random_exponential

            @retry(stop=stop_after_attempt(3), wait=wait_random_exponential(max=10))
            async def forecast(session, city):
                return await session.call_tool("get_weather", {"city": city})
            """,
        # An OAuth device-code token poll (RFC 8628): the server sets the interval.
        """

            import asyncio, time

            async def poll_for_token(self, device_code, interval=3.0, timeout=1800.0):
                start = time.time()
                while time.time() - start < timeout:
                    try:
                        response = await self.http_client.post(
                            f"{self.base_url}/oauth/device/token",
                            data={"grant_type": "urn:ietf:params:oauth:grant-type:device_code", "device_code": device_code},
                        )
                        if response.status_code == 200:
                            return response.json()
                    except Exception as e:
                        print(f"Error polling for token: {e}")
                    await asyncio.sleep(interval)
            """,
        # An interactive loop: each round is what a person typed.
        """

            async def playground(browser_session, selector_map):
                while True:
                    answer = input("index to click, or q: ")
                    if answer == "q":
                        break
                    try:
                        node = selector_map[int(answer)]
                        await browser_session.event_bus.dispatch(ClickElementEvent(node=node))
                    except ValueError:
                        print(f"Invalid input: {answer!r}")
            """,
        # A reconnect loop: close the old session, connect a new one.
        """

            import asyncio

            async def connect_to_new_endpoint(self):
                while not self.closed:
                    try:
                        if self.current_session is not None:
                            await self.current_session.close()
                        self.current_session = await self.aiohttp_client_session.ws_connect(self.wss_uri)
                        self.current_session_monitor.cancel()
                        return
                    except Exception as e:
                        self.logger.exception(f"Failed to connect: {e}")
                        await asyncio.sleep(self.ping_interval)
            """,
        # A reconnect loop through a private method: a failed round drops the connection, the
        # next one opens a new one before it publishes.
        """

            import redis

            class RedisManager:
                def _publish(self, data):
                    for retries_left in range(1, -1, -1):  # 2 attempts
                        try:
                            if not self.connected:
                                self._redis_connect()
                            return self.redis.publish(self.channel, self.json.dumps(data))
                        except Exception as exc:
                            if retries_left > 0:
                                self.logger.error("Cannot publish to redis... retrying: %s", exc)
                                self.connected = False
                            else:
                                self.logger.error("Cannot publish to redis... giving up: %s", exc)
                                break
            """,
        # A readiness probe of a local server.
        """

            import time, requests

            def wait_until_up(port):
                while True:
                    try:
                        requests.post(f"http://127.0.0.1:{port}/health", timeout=1)
                        return
                    except requests.ConnectionError:
                        time.sleep(0.5)
            """,
        # A Redis `WATCH` transaction aborted with `WatchError` was not applied.
        """

            from redis import WatchError

            def enqueue_dependents(self, job, pipeline):
                while True:
                    try:
                        pipeline.watch(job.dependents_key)
                        self.queue.enqueue_job(job, pipeline=pipeline)
                        pipeline.execute()
                        break
                    except WatchError:
                        continue
            """,
        # A content-addressed write: the version is named by the hash of what it holds.
        """
            from tenacity import retry, stop_after_attempt, wait_exponential

            @retry(stop=stop_after_attempt(3), wait=wait_exponential(max=10))
            async def publish(db, org, name, archive, content_hash):
                return await db.publish_task_version(org=org, name=name, archive_path=archive,
                                                     content_hash=content_hash)
            """,
        # Verify first: go round only when the first attempt provably did not land.
        """

            import time

            def create_invoice(api, ref, body):
                for attempt in range(3):
                    try:
                        return api.create_invoice(body, reference=ref)
                    except TimeoutError:
                        if api.get_invoice(ref):
                            return api.get_invoice(ref)
                        time.sleep(2 ** attempt)
            """,
        # The same with the lookup's answer held in a name: adopt what the lost reply made.
        """
            import asyncio

            import aiohttp

            async def create_tenant(session: aiohttp.ClientSession, base, name):
                tenant = None
                for attempt in range(4):
                    try:
                        async with session.post(f"{base}/api/v1/tenants", json={"name": name}) as resp:
                            tenant = (await resp.json())["id"]
                        break
                    except (aiohttp.ClientError, asyncio.TimeoutError):
                        existing = await find_tenant_by_name(session, base, name)
                        if existing is not None:
                            tenant = existing
                            break
                        await asyncio.sleep(2 ** attempt)
                return tenant
            """,
        # A model endpoint: inference, not a write.
        """

            import httpx

            async def complete(client: httpx.AsyncClient, payload):
                for attempt in range(3):
                    try:
                        return await client.post("https://api.example.com/v1/chat/completions", json=payload)
                    except httpx.TimeoutException:
                        continue
            """,
        # An endpoint named for generation (`{base}/worker_generate_stream`): a model answers.
        """
            import aiohttp
            from tenacity import retry, stop_after_attempt, wait_exponential

            @retry(stop=stop_after_attempt(3), wait=wait_exponential(min=1, max=10))
            async def answer(base_url, body):
                async with aiohttp.ClientSession() as session:
                    async with session.post(f"{base_url}/worker_generate_stream", json=body) as response:
                        return await response.text()
            """,
        # A POST that asks a model or runs a query, by its URL or by the function it is in.
        """

            import httpx
            from tenacity import retry, stop_after_attempt, wait_random_exponential

            class ModerationGuard:
                def __init__(self, endpoint: str):
                    self.endpoint = endpoint
                    self._client = httpx.Client(timeout=10)

                @retry(stop=stop_after_attempt(3), wait=wait_random_exponential(max=10))
                def _classify(self, text: str) -> str:
                    response = self._client.post(self.endpoint, json={"input": text})
                    response.raise_for_status()
                    return response.json()["label"]
            """,
        """

            import requests
            from tenacity import retry, stop_after_attempt, wait_random_exponential

            @retry(stop=stop_after_attempt(3), wait=wait_random_exponential(max=10))
            def ask_claude(base_url, model, messages):
                payload = {"model": model, "max_tokens": 1024, "messages": messages}
                return requests.post(f"{base_url}/v1/messages", json=payload, timeout=60).json()

            @retry(stop=stop_after_attempt(3), wait=wait_random_exponential(max=10))
            def ollama(host, prompt):
                return requests.post(f"{host}/api/generate", json={"prompt": prompt}, timeout=60).json()

            @retry(stop=stop_after_attempt(3), wait=wait_random_exponential(max=10))
            def issues(token):
                query = "query { viewer { assignedIssues { nodes { id title } } } }"
                return requests.post("https://api.linear.app/graphql", json={"query": query}, timeout=30)
            """,
        # OpenAI's Responses API from a function named for the model it calls: the payload is
        # a parameter, the function's name says what it sends.
        """
            import httpx

            def _call_model_with_retry(base_url: str, payload: dict):
                for attempt in range(3):
                    try:
                        with httpx.Client(timeout=30) as client:
                            return client.post(f"{base_url}/responses", json=payload).json()
                    except httpx.HTTPError:
                        continue
            """,
        # A receiver named like a client, built nowhere in sight: a variable's name never
        # makes a client, so its overloaded `create` is no known write.
        """
            from tenacity import retry

            @retry
            def open_ticket(crm_client, body):
                return crm_client.tickets.create(body)
            """,
        # A Temporal activity the module's own workflow runs with `maximum_attempts=1`: the
        # caller's policy decides, and it makes one attempt (the server's default is for
        # activities run from elsewhere).
        """

            from datetime import timedelta
            from temporalio import activity, workflow
            from temporalio.common import RetryPolicy

            @activity.defn
            async def send_confirmation(order):
                await MAILER.send_email(order["email"], "confirmed")

            @workflow.defn
            class OrderWorkflow:
                @workflow.run
                async def run(self, order):
                    await workflow.execute_activity(send_confirmation, order,
                                                    start_to_close_timeout=timedelta(seconds=30),
                                                    retry_policy=RetryPolicy(maximum_attempts=1))
            """,
        # A method of a class named for a model client posts to the model: inference, not a
        # write, though its URL is a variable.
        """
            import httpx
            import tenacity

            class GatewayLlm:
                def __init__(self, url: str):
                    self._url = url
                    self._client = httpx.AsyncClient(timeout=60)

                async def _post_with_retry(self, payload: dict) -> httpx.Response:
                    async for attempt in tenacity.AsyncRetrying(stop=tenacity.stop_after_attempt(3),
                                                                wait=tenacity.wait_random_exponential(max=20)):
                        with attempt:
                            response = await self._client.post(self._url, json=payload)
                            response.raise_for_status()
                            return response
            """,
        # A transport send of a request built for a GET (a signed query): it reads.
        """
            import requests
            import time

            def query(url, headers, params):
                for attempt in range(3):
                    try:
                        prepared = requests.Request(method="GET", url=url, headers=headers, params=params).prepare()
                        with requests.Session() as session:
                            response = session.send(prepared, timeout=10)
                        response.raise_for_status()
                        return response.json()
                    except requests.RequestException:
                        time.sleep(2 ** attempt)
            """,
        # A retry helper whose handler drops the field the server refused (`del active[field]`)
        # before going round: each round sends a smaller request, a search, not a repeat.
        """
            def _write_dropping_unknown_fields(write, core, optional):
                active = dict(optional)
                while True:
                    try:
                        return write({**core, **active})
                    except Exception as exc:
                        field = unknown_field_in(exc)
                        if field is None or field not in active:
                            raise
                        del active[field]

            def create_person(client, core, optional):
                def create(values):
                    return client.records.create_record(object="people", data={"values": values})
                return _write_dropping_unknown_fields(create, core, optional)
            """,
        # A reconnect: each round takes a connection from the pool, and the handler drops the
        # one a send failed on (a socket that went stale while idle), so no request is repeated
        # on the connection that may have carried it.
        """
            import aiohttp

            class ResponsesSocket:
                async def acquire_and_send(self, data: str) -> aiohttp.ClientWebSocketResponse:
                    last_exc = None
                    for _ in range(3):
                        ws = await self._pool.get(timeout=self._timeout)
                        try:
                            await ws.send_str(data)
                            return ws
                        except Exception as exc:
                            self._pool.remove(ws)
                            last_exc = exc
                    raise ConnectionError("failed to send over the websocket") from last_exc
            """,
        # A method that hands its own receiver to a `*_with_retry` helper, which takes the
        # model, not a callable: the method is no retry helper, and a caller passing it
        # keywords only hands it nothing to retry.
        """
            from ._base import completion_with_retry

            class ChatModel:
                def _stream(self, messages, **kwargs):
                    return completion_with_retry(self, messages=messages, stream=True, **kwargs)

                def _generate(self, messages, **kwargs):
                    if kwargs.get("stream"):
                        return self._stream(messages=messages, **kwargs)
                    return completion_with_retry(self, messages=messages, **kwargs)
            """,
    ]

    INVALID = [
        # Not a failover: the round logs what it sends, but picks nothing from the record.
        Invalid("""
            import json
            import time
            import requests

            def refund(charge_id, sent):
                for attempt in range(3):
                    body = json.dumps({"charge": charge_id})
                    sent.append(body)
                    try:
                        return requests.post("https://api.example.com/v1/refunds", data=body, timeout=5)
                    except requests.Timeout:
                        time.sleep(2 ** attempt)
            """, line=10),
        # A function named for its token, posting to a URL that names a write: the URL decides.
        Invalid("""
            import time
            import requests

            def call_api_with_token(payload, token):
                for attempt in range(3):
                    try:
                        return requests.post("https://api.example.com/v1/orders", json=payload,
                                             headers={"Authorization": f"Bearer {token}"}, timeout=5)
                    except requests.Timeout:
                        time.sleep(2 ** attempt)
            """, line=7),
        # Its look-alike revokes a token: a write, whatever the words around it.
        Invalid("""
            import asyncio
            import httpx

            async def revoke_token(client: httpx.AsyncClient, token):
                for attempt in range(3):
                    try:
                        return await client.post("https://auth.example.com/oauth/revoke", data={"token": token})
                    except httpx.TransportError:
                        await asyncio.sleep(2 ** attempt)
            """, line=7),
        # The same loop with an unconditional write: a repeat after a lost answer adds one more.
        Invalid("""
            from nats.js.errors import KeyWrongLastSequenceError
            from nats.js.kv import KeyValue

            async def increment(kv: KeyValue, key):
                for _ in range(5):
                    entry = await kv.get(key)
                    value = int(entry.value) + 1
                    try:
                        await kv.update(key, str(value).encode())
                        return
                    except KeyWrongLastSequenceError:
                        continue
            """, line=9, severity="info"),
        # The same failover loop, but the candidate is fixed before it: the same request again.
        Invalid("""
            import random
            import requests

            def switch_proxy(api_url, proxies, max_attempts=3):
                tried = set()
                attempts = 0
                candidate = random.choice(proxies)
                while attempts < max_attempts:
                    tried.add(candidate)
                    attempts += 1
                    try:
                        resp = requests.post(f"{api_url}/proxies/select", json={"name": candidate}, timeout=10)
                        if resp.ok:
                            return True
                    except requests.RequestException:
                        continue
                return False
            """, line=12),
        # The look-alike of a model call: the constant names a refunds endpoint.
        Invalid("""
            import asyncio
            import httpx

            API_URL = "https://api.example.com/v1/refunds"

            async def refund(client: httpx.AsyncClient, payload):
                for attempt in range(3):
                    try:
                        return await client.post(API_URL, json=payload, timeout=30)
                    except httpx.TransportError:
                        await asyncio.sleep(2 ** attempt)
            """, line=9),
        # The request helper again, but one caller creates an order through it.
        Invalid("""
            import httpx
            from tenacity import retry, retry_if_exception_type, stop_after_attempt

            class ShopClient:
                def __init__(self):
                    self.client = httpx.AsyncClient(base_url="https://api.example.com", timeout=30)

                @retry(stop=stop_after_attempt(3), retry=retry_if_exception_type(httpx.TimeoutException))
                async def _request(self, path, method="GET", data=None):
                    if method == "GET":
                        return await self.client.get(path)
                    return await self.client.post(path, json=data)

                async def get_order(self, order_id):
                    return await self._request(f"/orders/{order_id}")

                async def create_order(self, order):
                    return await self._request("/orders", method="POST", data=order)
            """, line=12, severity="info"),
        # A retry, not a poll: a failed answer goes round.
        Invalid("""
            import asyncio
            import httpx

            async def print_document(client: httpx.AsyncClient, document_id):
                while True:
                    response = await client.post("https://ppubs.example.com/api/print/submit", json=[document_id])
                    if response.status_code == 200:
                        return response.json()
                    await asyncio.sleep(1)
            """, line=6, severity="info"),
        # The same call under a retry told to make three attempts (one would retry nothing).
        Invalid("""
                import requests
                from retrying import retry

                @retry(stop_max_attempt_number=3)
                def open_ticket(crm_url, body):
                    return requests.post(f"{crm_url}/tickets", json=body, timeout=10)
                """, line=6),
        # A test that retries itself against a sandbox: its writes land in a test service
        # (a test module: it defines `test_*` functions), said at info.
        Invalid("""
                import requests
                from tenacity import retry, stop_after_attempt

                @retry(stop=stop_after_attempt(3))
                def test_ticket_reaches_the_sandbox(crm_url):
                    response = requests.post(f"{crm_url}/tickets", json={"subject": "smoke"}, timeout=10)
                    assert response.status_code == 201
                """, line=6, severity="info"),
        # A multipart upload's part, stored under its number: a repeat replaces the part
        # (an idempotent put), said at info.
        Invalid("""
                def send_part(session, file_id, part_number, source):
                    for _ in range(5):
                        try:
                            return session.upload_part(file_id, part_number, len(source), source.sha1, source.open())
                        except TransientUploadError:
                            continue
                """, line=4, severity="info"),
        # A retry helper of another module, known only by its name: what it retries on is not
        # in sight (this one goes round only on a handshake failure, before anything is
        # sent), so the finding is info, "taken for a retry from its name".
        Invalid("""
                from kubernetes.client import CoreV1Api
                from sandbox.k8s_utils import retry_k8s_api_call

                def create_pod(api: CoreV1Api, namespace, manifest):
                    retry_k8s_api_call(api.create_namespaced_pod, namespace=namespace, body=manifest)
                """, line=5, severity="info"),
        # The same for a retry decorator imported from the package's own utilities.
        Invalid("""
                import requests
                from acme.utils import retry_on_error

                @retry_on_error()
                def place_order(body):
                    return requests.post("https://api.example.com/v1/orders", json=body, timeout=10)
                """, line=6, severity="info"),
        # Retried in a function named for a read: a POST is how some services are read.
        Invalid("""
                import requests
                from tenacity import retry, stop_after_attempt

                @retry(stop=stop_after_attempt(3))
                def fetch_form_digest(site_url):
                    response = requests.post(f"{site_url}/_api/contextinfo", timeout=10)
                    response.raise_for_status()
                    return response.json()["FormDigestValue"]
                """, line=6, severity="info"),
        # The same executor given a statement that writes is a write repeated by the loop.
        Invalid(
            """
                import time

                from sqlalchemy.orm import Session

                def record_refund(session: Session, order_id, amount):
                    for attempt in range(3):
                        try:
                            return session.execute(f"INSERT INTO refunds VALUES ('{order_id}', {amount})")
                        except TimeoutError:
                            time.sleep(2 ** attempt)
                """,
            line=8,
        ),
        # A graph write handed to the driver as a transaction function: a CREATE adds a
        # node each time it runs, and the nested function of the same name elsewhere in the
        # module (an upsert) does not decide for this one.
        Invalid("""

                from neo4j.exceptions import TransientError
                from tenacity import retry, retry_if_exception_type, stop_after_attempt, wait_random_exponential

                class Events:
                    @retry(stop=stop_after_attempt(3), wait=wait_random_exponential(max=10),
                           retry=retry_if_exception_type(TransientError))
                    async def record(self, event):
                        async with self.driver.session() as session:
                            async def write(tx):
                                await tx.run("CREATE (e:Event {id: $id, at: $at})", id=event.id, at=event.at)
                            await session.execute_write(write)

                    @retry(stop=stop_after_attempt(3), wait=wait_random_exponential(max=10),
                           retry=retry_if_exception_type(TransientError))
                    async def merge_user(self, user):
                        async with self.driver.session() as session:
                            async def write(tx):
                                await tx.run("MERGE (u:User {id: $id}) SET u += $props", id=user.id, props=user.props)
                            await session.execute_write(write)
                """, line=12),
        # Its statement only merges and sets what it names (an upsert keyed on the node's
        # id), or only deletes: a repeat leaves the same graph.  Shown at info.
        Invalid("""

                from neo4j.exceptions import TransientError
                from tenacity import retry, retry_if_exception_type, stop_after_attempt, wait_random_exponential

                class Entities:
                    @retry(stop=stop_after_attempt(3), wait=wait_random_exponential(max=10),
                           retry=retry_if_exception_type(TransientError))
                    async def upsert_entity(self, entity_id, props):
                        async with self.driver.session() as session:
                            async def write(tx):
                                query = ("MERGE (n:Entity {entity_id: $entity_id}) "
                                         "ON CREATE SET n.created_at = timestamp() SET n += $props")
                                await tx.run(query, entity_id=entity_id, props=props)
                            await session.execute_write(write)
                """, line=14, severity="info"),
        Invalid(
            """
                import stripe
                from tenacity import retry, stop_after_attempt

                @retry(stop=stop_after_attempt(3))
                def refund(order):
                    return stripe.Refund.create(payment_intent=order.pi, amount=order.total)
                """,
            line=6,
        ),
        Invalid(
            """
                import tenacity

                @tenacity.retry
                def open_ticket(crm, body):
                    return crm.create_ticket(body)
                """,
            line=5,
        ),
        Invalid(
            """
                from tenacity import Retrying, stop_after_attempt

                def book(api, slot):
                    for attempt in Retrying(stop=stop_after_attempt(3)):
                        with attempt:
                            api.book_room(slot)
                """,
            line=6,
        ),
        Invalid(
            """
                import backoff, requests

                @backoff.on_exception(backoff.expo, requests.RequestException)
                def send_sms(to, text):
                    requests.post('https://sms.example.com/send', json={'to': to}, timeout=5)
                """,
            line=5,
        ),
        Invalid(
            """
                import stamina, httpx

                @stamina.retry(on=httpx.HTTPError, attempts=3)
                def pay(client: httpx.Client, invoice):
                    return client.post('/payments', json=invoice)
                """,
            line=5,
        ),
        Invalid(
            """
                from retrying import retry

                @retry(stop_max_attempt_number=3)
                def cancel(api, order_id):
                    api.cancel_order(order_id)
                """,
            line=5,
        ),
        Invalid(
            """
                import time

                def create(crm, payload):
                    for attempt in range(3):
                        try:
                            return crm.create_ticket(payload)
                        except TimeoutError:
                            time.sleep(2 ** attempt)
                """,
            line=6,
        ),
        Invalid(
            """
                def deploy(api, build):
                    done = False
                    while not done:
                        try:
                            api.deploy_release(build)
                            done = True
                        except Exception:
                            pass
                """,
            line=5,
            severity="info",  # a `while` loop with no attempt count: taken for a retry from its shape
        ),
        Invalid(
            """
                import time

                import httpx

                def post_status(http: httpx.Client, body):
                    for attempt in range(5):
                        resp = http.post('https://api.example.com/status', json=body)
                        if resp.status_code < 500:
                            return resp
                        time.sleep(1)
                """,
            line=7,
        ),
        Invalid(
            """
                import time

                def call_with_retry(fn, attempts=3):
                    for i in range(attempts):
                        try:
                            return fn()
                        except Exception:
                            time.sleep(1)

                def open_ticket(crm, payload):
                    return call_with_retry(lambda: crm.create_ticket(payload))
                """,
            line=11,
        ),
        Invalid(
            """
                from langchain_core.tools import tool

                @tool
                def refund_payment(order_id: str) -> str:
                    '''Refund an order.'''
                    return PAYMENTS.refund(order_id)

                safe_refund = refund_payment.with_retry(stop_after_attempt=3)
                """,
            line=8,
        ),
        Invalid(
            """
                from langgraph.graph import StateGraph
                from langgraph.types import RetryPolicy

                def send_invoice(state):
                    MAILER.send_email(state['to'], state['pdf'])
                    return state

                builder = StateGraph(dict)
                builder.add_node('invoice', send_invoice, retry_policy=RetryPolicy(max_attempts=3))
                """,
            line=5,
        ),
        # Task queues and workflow engines, as their users write them.
        Invalid("""

                from celery import shared_task
                import requests

                @shared_task(autoretry_for=(requests.RequestException,), retry_backoff=True, max_retries=5)
                def send_invoice(invoice_id):
                    requests.post("https://billing.example.com/invoices/send", json={"id": invoice_id}, timeout=10)
                """, line=7),
        Invalid("""

                from proj.celery import app

                @app.task(bind=True, max_retries=3)
                def charge_card(self, gateway, order):
                    try:
                        return gateway.charge(order.card, order.total)
                    except gateway.Timeout as exc:
                        raise self.retry(exc=exc, countdown=30)
                """, line=7),
        Invalid("""

                from prefect import flow, task

                @task(retries=3, retry_delay_seconds=[1, 10, 100])
                def create_ticket(crm, body):
                    return crm.create_ticket(body)
                """, line=6),
        Invalid("""

                import dramatiq
                import requests

                @dramatiq.actor(max_retries=5)
                def send_welcome(user_id):
                    requests.post("https://mail.example.com/send", json={"user": user_id}, timeout=5)
                """, line=7),
        Invalid("""

                from huey import RedisHuey

                huey = RedisHuey("billing")

                @huey.task(retries=3, retry_delay=10)
                def refund(payments, order):
                    payments.refund(order.charge_id)
                """, line=8),
        # A task decorator of a queue built elsewhere, known by `retries=` alone: inferred.
        Invalid("""

                from app.queue import huey

                @huey.task(retries=3, retry_delay=10)
                def refund(payments, order):
                    payments.refund(order.charge_id)
                """, line=6, severity="info"),
        # A Temporal activity is retried by the server's default policy, unless the code that
        # starts it (often another module, often with `maximum_attempts=1`) says otherwise: info.
        Invalid("""

                from temporalio import activity

                @activity.defn
                async def book_room(slot: dict) -> str:
                    return await HOTEL_API.book_room(slot)
                """, line=6, severity="info"),
        Invalid("""

                from datetime import timedelta
                from temporalio import activity, workflow
                from temporalio.common import RetryPolicy

                def send_confirmation(order):
                    MAILER.send_email(order["email"], "confirmed")

                @workflow.defn
                class OrderWorkflow:
                    @workflow.run
                    async def run(self, order):
                        await workflow.execute_activity(
                            send_confirmation, order, start_to_close_timeout=timedelta(seconds=30),
                            retry_policy=RetryPolicy(maximum_attempts=5),
                        )
                """, line=14),
        Invalid("""

                from dagster import RetryPolicy, op

                @op(retry_policy=RetryPolicy(max_retries=3, delay=5))
                def publish(context):
                    BLOG_API.publish_post(context.op_config["post"])
                """, line=6),
        Invalid("""

                from redis import Redis
                from rq import Queue, Retry

                def refund_order(order):
                    PAYMENTS.refund(order["charge"])

                def schedule(order):
                    Queue(connection=Redis()).enqueue(refund_order, order, retry=Retry(max=3, interval=[10, 30, 60]))
                """, line=9),
        Invalid("""

                import httpx
                from arq import Retry

                async def notify(ctx, user):
                    async with httpx.AsyncClient() as client:
                        r = await client.post("https://hooks.example.com/notify", json=user)
                    if r.status_code >= 500:
                        raise Retry(defer=ctx["job_try"] * 5)
                """, line=7),
        # Agent frameworks that run a tool or a whole run again.
        Invalid("""

                from pydantic_ai import Agent, ModelRetry

                agent = Agent("openai:gpt-4o", retries=3)

                @agent.tool_plain
                def send_email(to: str, body: str) -> str:
                    reply = MAILER.send_email(to, body)
                    if not reply.accepted:
                        raise ModelRetry("the mail server refused it, try again")
                    return "sent"
                """, line=8),
        Invalid("""

                from agno.agent import Agent

                def issue_refund(order_id: str) -> str:
                    return PAYMENTS.refund(order_id)

                support = Agent(tools=[issue_refund], retries=3, exponential_backoff=True)
                """, line=7),
        # Transports that retry a write under the caller.
        Invalid("""

                import requests
                from requests.adapters import HTTPAdapter
                from urllib3.util.retry import Retry

                class CRM:
                    def __init__(self):
                        self.session = requests.Session()
                        retries = Retry(total=5, backoff_factor=1, allowed_methods=None)
                        self.session.mount("https://", HTTPAdapter(max_retries=retries))

                    def create_ticket(self, body):
                        return self.session.post("https://crm.example.com/tickets", json=body, timeout=10)
                """, line=13),
        Invalid("""

                from slack_sdk import WebClient
                from slack_sdk.http_retry import ConnectionErrorRetryHandler

                client = WebClient(token=TOKEN, retry_handlers=[ConnectionErrorRetryHandler(max_retry_count=3)])

                def announce(channel, text):
                    client.chat_postMessage(channel=channel, text=text)
                """, line=8),
        # Messaging clients known by their constructors, whatever their variables are called.
        Invalid("""

                from tenacity import retry, stop_after_attempt, wait_random_exponential
                from twilio.rest import Client

                tw = Client(ACCOUNT_SID, AUTH_TOKEN)

                @retry(stop=stop_after_attempt(3), wait=wait_random_exponential(max=10))
                def text_customer(phone, body):
                    return tw.messages.create(to=phone, from_=SENDER, body=body)
                """, line=9),
        Invalid("""

                import backoff
                from python_http_client.exceptions import HTTPError
                from sendgrid import SendGridAPIClient

                @backoff.on_exception(backoff.expo, HTTPError, max_tries=4)
                def send_receipt(message):
                    sg = SendGridAPIClient(API_KEY)
                    return sg.send(message)
                """, line=9),
        # An MCP client calling a write tool by name.
        Invalid("""

                from tenacity import retry, stop_after_attempt

                @retry(stop=stop_after_attempt(3))
                async def notify(session, to):
                    return await session.call_tool("send_email", {"to": to, "subject": "Your refund"})
                """, line=6),
        # A tool known by the name it is given to the agent (its body is out of sight).
        Invalid("""

                from agno.agent import Agent
                from billing import backend

                def send_invoice(customer_id: str) -> str:
                    return backend(customer_id)

                billing_agent = Agent(tools=[send_invoice], retries=2, exponential_backoff=True)
                """, line=8),
        # A handler that goes round on a timeout: the attempt may have landed.
        Invalid("""

                import time

                def create_index(client, name, body):
                    for attempt in range(8):
                        try:
                            client.indices.create_index_alias(index=name, body=body)
                            return
                        except Exception as e:
                            if "timed out" in str(e).lower():
                                time.sleep(20)
                            else:
                                raise
                """, line=7),
        # A write named for a delete is idempotent as a DELETE is.
        Invalid("""

                import backoff

                @backoff.on_exception(backoff.expo, Exception, max_tries=3)
                async def delete_teams(db, team_ids):
                    await db.teams.delete_many(where={"team_id": {"in": team_ids}})
                """, line=6, severity="info"),
        # A write told to overwrite what is there: a repeat stores the same bytes under the same name.
        Invalid("""

                from azure.core.exceptions import AzureError
                from azure.storage.blob.aio import ContainerClient

                async def store(container: ContainerClient, blob_name, blob_content, max_retries=3):
                    retries = 0
                    while retries < max_retries:
                        try:
                            await container.upload_blob(blob_name, blob_content, overwrite=True)
                            break
                        except AzureError:
                            retries += 1
                """, line=9, severity="info"),
        # A raw HTTP DELETE or PUT is idempotent: a repeat leaves the same state.
        Invalid("""

                import requests
                from tenacity import retry, stop_after_attempt, wait_random_exponential

                @retry(stop=stop_after_attempt(5), wait=wait_random_exponential(max=10))
                def remove_webhook(webhook_id):
                    requests.delete(f"https://api.example.com/v1/webhooks/{webhook_id}", timeout=10)
                """, line=7, severity="info"),
        Invalid("""

                import requests
                from tenacity import retry, stop_after_attempt, wait_random_exponential

                @retry(stop=stop_after_attempt(5), wait=wait_random_exponential(max=10))
                def save_contact(contact):
                    requests.put(f"https://crm.example.com/contacts/{contact['id']}", json=contact, timeout=10)
                """, line=7, severity="info"),
        # A content hash given as anything but the write's key names nothing the service dedupes on.
        Invalid("""

                from tenacity import retry, stop_after_attempt, wait_exponential

                @retry(stop=stop_after_attempt(3), wait=wait_exponential(max=10))
                async def publish(db, org, name, archive, content_hash):
                    return await db.publish_task_version(org=org, name=name, archive_path=archive,
                                                         tag=content_hash)
                """, line=6),
        # A POST that moves the one resource its URL names to a state (`/tasks/{id}/complete`):
        # a repeat finds it there, as a PUT does; shown at info.  A POST to a collection under
        # a resource (`/orders/{id}/refunds`) makes a new one each time: an error.
        Invalid("""

                import time
                import httpx

                def complete_task(client: httpx.Client, base_url, task_id, summary, max_retries=3):
                    for attempt in range(max_retries + 1):
                        try:
                            client.post(f"{base_url}/tasks/{task_id}/complete", json={"summary": summary})
                            return
                        except httpx.TransportError:
                            time.sleep(2 ** attempt)
                """, line=8, severity="info"),
        Invalid("""

                import time
                import httpx

                def refund_order(client: httpx.Client, base_url, order_id, amount, max_retries=3):
                    for attempt in range(max_retries + 1):
                        try:
                            client.post(f"{base_url}/orders/{order_id}/refunds", json={"amount": amount})
                            return
                        except httpx.TransportError:
                            time.sleep(2 ** attempt)
                """, line=8),
        # A POST to a URL held in a variable, through a generic client: a write known
        # from the verb alone (POST also carries model calls and searches): shown at info.
        Invalid("""

                import httpx
                from tenacity import retry, stop_after_attempt, wait_random_exponential

                class WebhookSender:
                    def __init__(self, url: str):
                        self.url = url
                        self._client = httpx.Client(timeout=10)

                    @retry(stop=stop_after_attempt(3), wait=wait_random_exponential(max=10))
                    def deliver(self, event: dict):
                        return self._client.post(self.url, json=event)
                """, line=12, severity="info"),
        # A survey API's `/responses`, sent by a function named for what it records: a write.
        Invalid("""

                import requests
                from tenacity import retry, stop_after_attempt, wait_random_exponential

                @retry(stop=stop_after_attempt(3), wait=wait_random_exponential(max=10))
                def submit_answer(base, survey_id, answers):
                    url = f"{base}/surveys/{survey_id}/responses"
                    return requests.post(url, json={"answers": answers}, timeout=10)
                """, line=8),
        # A PATCH that sets a field: a repeat sets it again (a merge patch is idempotent).
        Invalid("""

                import asyncio
                import requests

                async def trash_page(page: str):
                    for _ in range(3):
                        response = requests.patch(f"https://api.notion.com/v1/pages/{page}",
                                                  json={"in_trash": True}, timeout=30)
                        if response.status_code == 200:
                            return
                        await asyncio.sleep(1)
                """, line=7, severity="info"),
        # A JSON Patch whose `add` appends to an array: a repeat appends twice.
        Invalid("""

                import requests
                from tenacity import retry, stop_after_attempt, wait_random_exponential

                @retry(stop=stop_after_attempt(3), wait=wait_random_exponential(max=10))
                def add_label(base, item_id, label):
                    ops = [{"op": "add", "path": "/labels/-", "value": label}]
                    return requests.patch(f"{base}/items/{item_id}", json=ops, timeout=10)
                """, line=8),
        # A PATCH to a URL held in a variable: most set fields, a repeat sets them again.
        Invalid("""

                import httpx
                from tenacity import retry, stop_after_attempt, wait_random_exponential

                class MonitorClient:
                    def __init__(self, base: str):
                        self._client = httpx.Client(base_url=base, timeout=10)

                    @retry(stop=stop_after_attempt(3), wait=wait_random_exponential(max=10))
                    def update(self, path: str, fields: dict):
                        return self._client.patch(path, json=fields)
                """, line=11, severity="info"),
        # The URL is a local bound once to a literal that names the endpoint: a known write.
        Invalid("""

                import requests
                from tenacity import retry, stop_after_attempt, wait_random_exponential

                @retry(stop=stop_after_attempt(3), wait=wait_random_exponential(max=10))
                def send_text(base, phone_id, to, body):
                    url = f"{base}/v19.0/{phone_id}/messages"
                    return requests.post(url=url, json={"to": to, "text": {"body": body}}, timeout=10)
                """, line=8),
        # A handler that repairs the connection (a new session, a refreshed token) excuses
        # the loop's pace, not the repeat: the charge may have landed before the drop.
        Invalid("""

                import time
                import requests

                def charge(session: requests.Session, order):
                    for attempt in range(3):
                        try:
                            return session.post("https://api.pay.example.com/v1/charges", json=order, timeout=10)
                        except requests.ConnectionError:
                            session = requests.Session()
                            refresh_token(session)
                            time.sleep(2 ** attempt)
                """, line=8),
        # A GraphQL mutation is a write, whatever the endpoint is called.
        Invalid("""

                import requests
                from tenacity import retry, stop_after_attempt, wait_random_exponential

                @retry(stop=stop_after_attempt(3), wait=wait_random_exponential(max=10))
                def create_issue(token, title):
                    mutation = "mutation IssueCreate($title: String!) { issueCreate(input: {title: $title}) { success } }"
                    return requests.post("https://api.linear.app/graphql", json={"query": mutation, "variables": {"title": title}},
                                         headers={"Authorization": token}, timeout=30)
                """, line=8),
        # A handler that undoes the attempt before the retry: clean only if the undo
        # reaches what the attempt did (a track dies with its session; a commit that
        # landed before its reply was lost does not roll back), so it is shown at info.
        Invalid("""

                from tenacity import retry, stop_after_attempt, wait_exponential

                class Room:
                    @retry(stop=stop_after_attempt(3), wait=wait_exponential(min=1, max=10))
                    async def join(self, track):
                        try:
                            await self.room.connect(self.url, self.token)
                            await self.room.publish_track(track)
                        except Exception:
                            await self._rollback_join()
                            raise
                """, line=9, severity="info"),
        # A transport send of a request built for a POST to a named endpoint.
        Invalid(
            """
                import requests
                import time

                def charge(session: requests.Session, body):
                    for attempt in range(3):
                        try:
                            request = requests.Request("POST", "https://pay.example.com/v1/charges", json=body)
                            return session.send(session.prepare_request(request), timeout=10).json()
                        except requests.RequestException:
                            time.sleep(2 ** attempt)
                """,
            line=8,
        ),
        # A loop that gives up on a timeout (the request may still be running) and goes round
        # only on a lost connection or a server error: info, and the message says so.
        Invalid(
            """
                import requests

                def submit_evaluation(endpoint, payload):
                    for attempt in range(2):
                        try:
                            resp = requests.post(f"{endpoint}/api/evaluations", json=payload, timeout=30)
                            if resp.status_code >= 500 and attempt == 0:
                                continue
                            return resp.json()
                        except requests.exceptions.Timeout:
                            return {"error": "timed out; the evaluation may still be running"}
                        except requests.exceptions.ConnectionError:
                            if attempt == 0:
                                continue
                            raise
                """,
            line=6,
            severity="info",
        ),
        # An ORM's get-or-create, keyed on what it looks up: a repeat finds the row the
        # first attempt made, so it is reported as idempotent, at info.
        Invalid(
            """
                from django.db import OperationalError, transaction
                from tenacity import retry, retry_if_exception_type, stop_after_attempt

                @retry(retry=retry_if_exception_type(OperationalError), stop=stop_after_attempt(3))
                def store_result(task_id, fields):
                    with transaction.atomic():
                        obj, created = TaskResult.objects.get_or_create(task_id=task_id, defaults=fields)
                    return obj
                """,
            line=7,
            severity="info",
        ),
        # Inferred through a helper: reported with the chain, at a lower severity.
        Invalid(
            """
                import time, requests

                def _submit(body):
                    return requests.post('https://crm.example.com/tickets', json=body, timeout=5)

                def open_ticket(body):
                    for attempt in range(3):
                        try:
                            return _submit(body)
                        except requests.Timeout:
                            time.sleep(2 ** attempt)
                """,
            line=9,
            severity="info",
        ),
        # Clients known by construction: an object of a client package's class kept in
        # `self` by `__init__`, a property and a factory annotated to return one.
        Invalid("""

                from opensearchpy import OpenSearch
                from tenacity import retry, stop_after_attempt

                class Documents:
                    def __init__(self, hosts):
                        self.client = OpenSearch(hosts=hosts)

                    @retry(stop=stop_after_attempt(3))
                    def add(self, index, doc):
                        return self.client.create(index=index, id=doc["id"], body=doc)
                """, line=11),
        Invalid("""

                from functools import cached_property

                import httpx
                from tenacity import AsyncRetrying, stop_after_attempt

                class Bookings:
                    @cached_property
                    def _http(self) -> httpx.AsyncClient:
                        return httpx.AsyncClient(base_url="https://hotel.example.com", timeout=10)

                    async def book(self, slot):
                        async for attempt in AsyncRetrying(stop=stop_after_attempt(3)):
                            with attempt:
                                return await self._http.post("/v1/bookings", json=slot)
                """, line=15),
        Invalid("""

                import aiohttp
                from tenacity import retry, stop_after_attempt

                class Sandbox:
                    _http: aiohttp.ClientSession | None = None

                    def _session(self) -> aiohttp.ClientSession:
                        if self._http is None:
                            self._http = aiohttp.ClientSession()
                        return self._http

                    @retry(stop=stop_after_attempt(3))
                    async def snapshot(self, url):
                        http = self._session()
                        async with http.post(f"{url}/snapshots") as resp:
                            return await resp.json()
                """, line=16),
    ]

    def __init__(self, context=None) -> None:
        super().__init__(context)
        settings = self.context.settings
        self.registry = ToolRegistry.for_table(settings.tools if settings is not None else None)
        self.min_level = LEVELS.index(self.context.options.get("min-level", "low"))
        retry = load_pack("retry")
        self.pre_send = set(retry["pre_send_exceptions"])
        self.no_retry = set(retry["no_retry_flags"]) | set(retry["no_retry_counts"])

    def _told_once(self, scope: RetryScope) -> bool:
        """The module's retry helper called with a keyword that tells it not to go round
        (`self._retrying(op, idempotent=False)`): it runs the operation once."""
        if scope.kind != "helper" or not isinstance(scope.node, cst.Call):
            return False
        return any(arg.keyword is not None and arg.keyword.value in self.no_retry and calls.is_false(arg.value)
                   for arg in scope.node.args)

    def visit_Module(self, node: cst.Module) -> None:
        model = self.get_metadata(RetryProvider, node)
        constants = module_constants(node)
        reported: set[int] = set()
        for retried in model.retried:
            if id(retried.node) in reported or all(one_attempt(scope) or self._told_once(scope)
                                                   for scope in retried.scopes):
                continue
            if all(scope.refused or scope.catches_only(self.pre_send, not_applied_words())
                   or refused_only(scope, constants) for scope in retried.scopes):
                continue  # every round follows an attempt that provably did not land
            if all(_searches(scope, retried, model) for scope in retried.scopes):
                continue  # each round sends a changed request (`name = f"{base}_v{i}"`): a search
            write = self.registry.retried_write(retried, model)
            if write is None or LEVELS.index(write.level) < self.min_level:
                continue
            if self.registry.key_of_retried(retried, model) is not None:
                continue
            reported.add(id(retried.node))
            undo = (undone_by(retried.site.node, retried.function.node)
                    if retried.site is not None and retried.function is not None else None)
            # A loop that gives up on a timeout repeats only what answered with a failure.
            spares_timeouts = all(gives_up_on_timeout(scope) for scope in retried.scopes)
            # The function that retries is named for a read (`_fetch_context_info` posting for a
            # digest, a GraphQL or search query sent as POST): its author says it reads.
            reader = self._reader(retried)
            self.report(retried.node, self._message(retried, write, undo, spares_timeouts, reader),
                        severity=INFERRED if undo or spares_timeouts or reader
                        else severity(write, retried.scopes, handed=retried.site is None))

    def _reader(self, retried: Retried) -> str | None:
        """The name of the function holding the retried call, when that name says it reads."""
        facts = retried.function
        while facts is not None and not facts.name:
            facts = facts.parent  # a lambda: the function it is written in
        return facts.name if facts is not None and self.registry.named_for_read(facts.name) else None

    @staticmethod
    def _message(retried: Retried, write, undo: str | None, spares_timeouts: bool, reader: str | None) -> str:
        scope = retried.scopes[0]
        what = f"`{write.name}(...)`" if retried.site is not None else f"`{write.name}`"
        via = f" (it calls `{write.via}`)" if write.via else ""
        guessed = "" if write.known else " (by its name)"
        shape = shape_note(scope)
        undone = f" unless `{undo}`, which the handler calls first, undid it" if undo else ""
        hazard = ("a timeout ends the loop, but an attempt that failed with a server error after the side "
                  "effect happened is repeated" if spares_timeouts else
                  "an attempt that timed out after the side effect happened is repeated")
        held = f" (in `{reader}`, which its name says reads)" if reader else ""
        return (f"{what} is a write{via}{guessed}{write_note(write)} retried by {scope.label}{shape}{held} without "
                f"an idempotency key: {hazard}{undone}")


def _searches(scope: RetryScope, retried: Retried, model: ModuleModel) -> bool:
    """Each round of the retry sends a changed request: a loop whose handler changes what
    the retried call sends, or a retry helper whose loop changes what it hands the
    callable it was given (`del values[field]` after the server names a field it lacks)."""
    if scope.kind == "loop":
        return adapts(scope.node, [retried])
    loop = scope.inner if scope.kind == "helper" else None
    if loop is None or loop.kind != "loop":
        return False
    return adapts(loop.node, [entry for entry in model.retried if any(s.node is loop.node for s in entry.scopes)])

from __future__ import annotations


import libcst as cst

from nonatomic.rules.lint.base import Invalid, LintRule
from nonatomic.rules.lint.semantics.confidence import INFERRED, idempotent_as, idempotent_name
from nonatomic.rules.lint.semantics.names import word_list
from nonatomic.rules.lint.semantics.retry import RetryProvider
from nonatomic.rules.lint.semantics.tools import ToolRegistry

_CLAIMS = {
    "read_only": "only reads",
    "idempotent": "may be called again with the same arguments to no further effect",
}


class MisleadingToolAnnotation(LintRule):
    """
    ## What it does
    Flags a tool annotated with MCP `ToolAnnotations(readOnlyHint=True)` or
    `idempotentHint=True` (or the same keys in an `annotations={...}` dict) whose
    own body performs a write without an idempotency key. Tools are FastMCP
    `@mcp.tool`, low-level `@server.call_tool()`, and the other tool decorators
    the registry knows; writes and keys are the tool registry's
    (`[tool.nonatomic.tools]`).

    ## Why is this bad?
    Annotations are what MCP clients and agent hosts decide by: a read-only tool
    is run without asking the user, an idempotent one is retried after a timeout
    without a second thought. An `update_contact` tool declared idempotent posted
    a new note to the CRM on every call; when the host retried it after a slow
    answer, the customer's record gained the same note three times, and an
    approval prompt that would have caught a "write" never appeared.

    A tool that passes a stable idempotency key to its write keeps its promise
    and is not flagged; neither is one whose annotations admit the write
    (`readOnlyHint=False`, `idempotentHint=False`), nor an idempotent tool whose
    write is idempotent itself (a delete, an upsert, statements that only merge
    what they name). A write known only by its name, such as a method of the
    package's own class defined in another module, or one reached through a
    helper, is reported at `info`: the annotation's author can read that body.
    A typed message sent through a transport (`client.send_websocket_message(
    {"type": "config/entity_registry/list"})`) is judged by its type: one whose
    last part names no write verb is a read.

    ## Example
    ```python
    from mcp.server.fastmcp import FastMCP
    from mcp.types import ToolAnnotations

    mcp = FastMCP("crm")

    @mcp.tool(annotations=ToolAnnotations(idempotentHint=True))
    def add_note(contact_id: str, text: str) -> str:
        return CRM.create_note(contact_id=contact_id, body=text).id
    ```

    ## Use instead
    ```python
    from mcp.server.fastmcp import FastMCP
    from mcp.types import ToolAnnotations

    mcp = FastMCP("crm")

    @mcp.tool(annotations=ToolAnnotations(idempotentHint=True))
    def add_note(contact_id: str, text: str, request_id: str) -> str:
        return CRM.create_note(contact_id=contact_id, body=text, idempotency_key=request_id).id
    ```
    Or annotate the tool as what it is: `ToolAnnotations(idempotentHint=False)`.
    """

    code = "NA108"
    METADATA_DEPENDENCIES = (RetryProvider,)

    VALID = [
        # A tool that moves a job to a state, said idempotent: cancelling again finds it cancelled.
        """
            from fastmcp import FastMCP

            mcp = FastMCP("jobs")

            @mcp.tool(annotations={"destructiveHint": True, "idempotentHint": True})
            async def cancel_job(job_id: str) -> dict:
                cancelled = await QUEUE.cancel_job(job_id)
                return {"cancelled": cancelled}
            """,
        # A tool named and annotated for a read (and so idempotent) whose API takes the query as a POST body.
        """
            import httpx
            from fastmcp import FastMCP

            mcp = FastMCP("warehouse")

            @mcp.tool(annotations={"readOnlyHint": True, "idempotentHint": True})
            async def list_remote_tables(connection: dict) -> list[dict]:
                async with httpx.AsyncClient(timeout=30) as client:
                    response = await client.post(f"{BASE}/v2/connector/metadata/tables", json={"connectionInfo": connection})
                    return response.json()
            """,
        # A read-only search that fans its reads out in a task group: `create_task_group` makes
        # an in-process object, nothing on a service.
        """
            import anyio
            from fastmcp import FastMCP

            mcp = FastMCP("files")

            @mcp.tool(annotations={"readOnlyHint": True})
            async def semantic_search(query: str) -> list[dict]:
                hits = await INDEX.search(query)
                async with anyio.create_task_group() as group:
                    for hit in hits:
                        group.start_soon(load_context, hit)
                return hits
            """,
        # A delete tool said idempotent: deleting again deletes nothing more, whatever helper
        # (here one that sorts the ids into found and missing first) its body goes through.
        """
            from fastmcp import FastMCP

            from .guard import partition_delete_links

            mcp = FastMCP("tracker")

            @mcp.tool(annotations={"destructiveHint": True, "idempotentHint": True})
            async def delete_work_item_links(item_id: str, links: list[str]) -> dict:
                deleted, missing = await partition_delete_links(item_id, links)
                return {"deleted": deleted, "missing": missing}
            """,
        # A typed message whose type reads (`.../list`, `lovelace/config`): the send is no write.
        """

            from typing import Any

            def register_tools(mcp: Any, client: Any) -> None:
                @mcp.tool(annotations={"readOnlyHint": True})
                async def list_helpers(helper_type: str) -> dict:
                    message = {"type": f"{helper_type}/list"}
                    return await client.send_websocket_message(message)

                @mcp.tool(annotations={"readOnlyHint": True})
                async def get_dashboard(url_path: str) -> dict:
                    return await client.send_websocket_message({"type": "lovelace/config", "url_path": url_path})
            """,
        # The write passes a stable key: the promise is kept.
        """

            from mcp.server.fastmcp import FastMCP
            from mcp.types import ToolAnnotations

            mcp = FastMCP("billing")

            @mcp.tool(annotations=ToolAnnotations(idempotentHint=True, destructiveHint=False))
            def refund(order_id: str) -> str:
                return PAYMENTS.refund(order_id, idempotency_key=f"refund-{order_id}")
            """,
        # A read-only tool that reads.
        """

            from mcp.server.fastmcp import FastMCP

            mcp = FastMCP("crm")

            @mcp.tool(annotations={"readOnlyHint": True})
            def find_contact(email: str) -> dict:
                return CRM.contacts.search(email=email)
            """,
        # The annotations admit the write.
        """

            from mcp.server.fastmcp import FastMCP
            from mcp.types import ToolAnnotations

            mcp = FastMCP("mail")

            @mcp.tool(annotations=ToolAnnotations(readOnlyHint=False, idempotentHint=False))
            def send_email(to: str, body: str) -> str:
                return MAILER.send_email(to, body)
            """,
        # A delete is idempotent itself: a repeat deletes what is already gone.
        """
            from mcp.server.fastmcp import FastMCP
            from mcp.types import ToolAnnotations

            mcp = FastMCP("crm")

            @mcp.tool(annotations=ToolAnnotations(destructiveHint=True, idempotentHint=True))
            def remove_contact(contact_id: str) -> None:
                CRM.delete_contact(contact_id)
            """,
        # Not a tool: a look-alike keyword on some other decorator.
        """

            @router.post("/notes", annotations={"idempotentHint": True})
            def add_note(contact_id: str, text: str):
                CRM.create_note(contact_id=contact_id, body=text)
            """,
    ]
    INVALID = [
        Invalid("""

                from mcp.server.fastmcp import FastMCP
                from mcp.types import ToolAnnotations

                mcp = FastMCP("crm")

                @mcp.tool(annotations=ToolAnnotations(idempotentHint=True))
                def add_note(contact_id: str, text: str) -> str:
                    return CRM.create_note(contact_id=contact_id, body=text).id
                """, line=7),
        # A read-only hint on a tool that sends mail, the server imported from elsewhere.
        Invalid("""

                from app.server import mcp

                @mcp.tool(name="lookup_order", annotations={"readOnlyHint": True, "openWorldHint": True})
                async def lookup_order(order_id: str) -> str:
                    order = await ORDERS.get_order(order_id)
                    await MAILER.send_email(order.email, "we looked at your order")
                    return order.status
                """, line=4),
        # The write is a method of the package's own class, defined in another module: it is
        # known only by its name, against the word of an author who can read its body (info).
        Invalid("""
                from fastmcp import FastMCP
                from mcp.types import ToolAnnotations

                from .store import GraphStore

                def build_server(store: GraphStore) -> FastMCP:
                    mcp = FastMCP("memory")

                    @mcp.tool(annotations=ToolAnnotations(readOnlyHint=False, idempotentHint=True))
                    async def create_entities(entities: list[dict]) -> list[dict]:
                        return await store.create_entities(entities)

                    return mcp
                """, line=9, severity="info"),
    ]

    def __init__(self, context=None) -> None:
        super().__init__(context)
        settings = self.context.settings
        self.registry = ToolRegistry.for_table(settings.tools if settings is not None else None)

    def visit_Module(self, node: cst.Module) -> None:
        model = self.get_metadata(RetryProvider, node)
        for group in model.functions.values():
            for facts in group:
                if not facts.tool_name or not facts.hints:
                    continue
                for which, claim in _CLAIMS.items():
                    hint = self.registry.hint(facts, which)
                    if hint is None:
                        continue
                    write = self.registry.body_write(facts, model)
                    if write is None or self.registry.key_inside(facts, model) is not None:
                        break
                    if which == "idempotent" and (write.upsert or write.replaces or idempotent_as(write)
                                                  or idempotent_name(facts.tool_name)
                                                  or next(iter(word_list(facts.tool_name)), None)
                                                  in self.registry.transitions):
                        continue  # a delete, an upsert or a move to a state (`cancel_job`) is idempotent itself
                    if write.http == "POST" and self.registry.asks(facts):
                        continue  # `list_tables`, `check_domains` POSTing their query: how many APIs read
                    spelled = self.registry.hint_names[which]
                    # The annotation is its author's word on code they can see; a write known
                    # only from a name (or a helper's body) is a weaker word against it.
                    guessed = not write.known or write.hops > 0
                    self.report(
                        hint,
                        f"tool `{facts.tool_name}` is annotated `{spelled}=True` (it {claim}) but calls "
                        f"`{write.via or write.name}(...)`, a write{' (by its name)' if not write.known else ''} "
                        "without an idempotency key: clients that trust the annotation run it unasked or retry it",
                        severity=INFERRED if guessed else None,
                    )
                    break

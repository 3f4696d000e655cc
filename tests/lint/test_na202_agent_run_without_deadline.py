"""NA202 on agent runs held to a deadline."""

from __future__ import annotations

import textwrap


def test_agents_sdk_and_crew_runs_under_deadlines_are_clean(lint):
    code = textwrap.dedent(
        '''
        import asyncio
        import anyio
        from agents import Runner
        from crewai import Crew

        async def triage(agent, ticket):
            async with asyncio.timeout(90):
                return await Runner.run(agent, ticket, max_turns=6)

        async def research(topic):
            crew = Crew(agents=[researcher], tasks=[brief])
            with anyio.fail_after(300):
                return await crew.kickoff_async(inputs={"topic": topic})
        '''
    )
    assert lint(code, select=["NA202"]).findings == []

"""Tool search: the BM25 search over names, descriptions and parameter names with servers as
facets, and the choice of what one request carries (everything below the share of the window;
past it the core, the thread's loaded tools newest first, and the search)."""

from __future__ import annotations

import pytest
from mcp import Client

from sidecar.context.taint import untrusted_result
from sidecar.context.tool_search import (
    BYTES_PER_TOKEN,
    CORE_TOOLS,
    DEFAULT_RESULTS,
    NEWEST_ALWAYS,
    SHARE_ENV,
    TOOL_SEARCH,
    SearchRequest,
    choose_tools,
    definition_bytes,
    search_request,
    search_tools,
)
from sidecar.llm.types import ToolSpec
from sidecar.store.tool_index import words
from tests.e2e.many_tools_server import TARGET, build_server


def tool(name: str, description: str, *parameters: str) -> ToolSpec:
    properties = {p: {"type": "string"} for p in parameters}
    return ToolSpec(name, description, {"type": "object", "properties": properties})


CATALOG = [
    tool("github__create_issue", "Open a new issue in a repository.", "repo", "title", "body"),
    tool("github__list_issues", "List the open issues of a repository.", "repo", "state"),
    tool("github__merge_pull_request", "Merge a pull request.", "repo", "number"),
    tool("jira__create_issue", "Create a ticket in a Jira project.", "project", "summary"),
    tool("jira__transition_issue", "Move an issue to another status.", "key", "status"),
    tool("billing__send_invoices", "Email every unpaid invoice to its customer.", "month"),
    tool("billing__refund", "Refund a payment to a customer's card.", "payment_id", "amount"),
    tool("bank__reconcile", "Match statement lines with booked payments.", "accountIban"),
    tool("calendar__create_event", "Put a meeting in the calendar.", "title", "starts_at"),
]


def request(query: str = "", server: str | None = None, limit: int = 5) -> SearchRequest:
    made = search_request({"query": query, "server": server, "limit": limit})
    assert isinstance(made, SearchRequest)
    return made


async def found(query: str, server: str | None = None, limit: int = 5) -> list[str]:
    outcome = await search_tools(CATALOG, request(query, server, limit))
    return [spec.name for spec in outcome.found]


# The search


def test_identifiers_are_split_into_words() -> None:
    assert words("create_pull-request.v2") == "create pull request v2"
    assert words("accountIban") == "account Iban"
    assert words("HTTPServer") == "HTTP Server"


@pytest.mark.anyio
async def test_the_tool_named_for_every_word_ranks_above_tools_named_for_some() -> None:
    ranked = await found("create issue")
    assert set(ranked[:2]) == {"github__create_issue", "jira__create_issue"}
    assert set(ranked[2:]) <= {"github__list_issues", "jira__transition_issue",
                               "calendar__create_event"}  # fmt: skip
    assert (await found("merge pull request"))[0] == "github__merge_pull_request"


@pytest.mark.anyio
async def test_descriptions_are_searched_with_stemming() -> None:
    assert (await found("refunds"))[0] == "billing__refund"
    assert (await found("unpaid invoice"))[0] == "billing__send_invoices"
    assert (await found("meeting"))[0] == "calendar__create_event"


@pytest.mark.anyio
async def test_a_parameter_name_finds_its_tool() -> None:
    assert await found("iban") == ["bank__reconcile"]
    assert (await found("payment id"))[0] == "billing__refund"


@pytest.mark.anyio
async def test_a_server_facet_keeps_to_that_server_and_every_server_is_counted() -> None:
    outcome = await search_tools(CATALOG, request("create issue", server="jira"))
    assert [spec.name for spec in outcome.found] == ["jira__create_issue", "jira__transition_issue"]
    assert dict(outcome.facets) == {"github": 2, "jira": 2, "calendar": 1}
    assert outcome.text().splitlines()[-1] == "Matches by server: github 2, jira 2, calendar 1."


@pytest.mark.anyio
async def test_a_server_without_a_query_lists_its_tools() -> None:
    assert await found("", server="billing") == ["billing__send_invoices", "billing__refund"]


@pytest.mark.anyio
async def test_a_search_reads_as_the_loaded_tools_with_their_parameters() -> None:
    outcome = await search_tools(CATALOG, request("iban"))
    assert outcome.text().splitlines()[:2] == [
        'Loaded 1 tools for "iban", best match first:',
        "- bank__reconcile(accountIban): Match statement lines with booked payments.",
    ]
    empty = await search_tools(CATALOG, request("weather"))
    assert empty.found == () and not empty.unknown_server
    assert empty.text().startswith('No tool matches "weather"')


@pytest.mark.anyio
async def test_an_unknown_server_finds_nothing_and_says_which_servers_there_are() -> None:
    outcome = await search_tools(CATALOG, request("issue", server="gitlab"))
    assert outcome.unknown_server and outcome.found == ()
    assert outcome.text().endswith("Servers: github, jira, billing, bank, calendar.")


def test_bad_arguments_are_said_and_the_limit_is_kept_in_range() -> None:
    assert isinstance(search_request({"query": 3}), str)
    assert isinstance(search_request({"query": "x", "server": ["a"]}), str)
    assert isinstance(search_request({"query": "x", "limit": "many"}), str)
    assert isinstance(search_request({}), str)
    assert search_request({"query": " issue "}) == SearchRequest("issue", None, DEFAULT_RESULTS)
    assert search_request({"query": "x", "limit": 500}) == SearchRequest("x", None, 20)
    assert search_request({"server": "jira", "limit": 0}) == SearchRequest("", "jira", 1)


@pytest.mark.anyio
async def test_among_301_tools_the_one_asked_for_comes_first() -> None:
    async with Client(build_server(), raise_exceptions=True) as client:
        listed = (await client.list_tools()).tools
    suite = [ToolSpec(f"suite__{t.name}", t.description or "", t.input_schema) for t in listed]
    assert len(suite) == 301
    for query in ("reconcile bank statement", "iban", "statement month"):
        outcome = await search_tools(suite, request(query))
        assert outcome.found[0].name == f"suite__{TARGET}"
    outcome = await search_tools(suite, request("create invoice", limit=3))
    assert outcome.found[0].name == "suite__create_invoice"


def test_what_a_search_found_is_atriums_own_answer_not_untrusted_content() -> None:
    assert untrusted_result(TOOL_SEARCH) is None


# The choice of what a request carries

CORE = [
    tool("workspace__read", "Read a file of the workspace.", "path"),
    tool("memory__search", "Search the memories.", "query"),
    tool("atrium__ask_author", "Ask the author.", "question"),
]
MANY = [tool(f"suite__tool_{n}", f"Tool number {n}. " + "x" * 400, "a", "b") for n in range(60)]
OFFERED = [*CORE, *MANY]


def window_for(size: int, share: float = 0.10) -> int:
    """The window whose `share` is `size` bytes of definitions."""
    return int(size / share / BYTES_PER_TOKEN) + 1


def test_below_the_share_every_tool_goes_and_none_is_deferred() -> None:
    total = sum(definition_bytes(t) for t in OFFERED)
    choice = choose_tools(OFFERED, [], window=window_for(total), share=0.10)
    assert choice.tools == tuple(OFFERED) and choice.deferred == ()
    assert choice.sent_bytes == choice.offered_bytes == total <= choice.budget_bytes


def test_past_the_share_the_core_and_the_search_go_and_the_rest_is_deferred() -> None:
    total = sum(definition_bytes(t) for t in OFFERED)
    choice = choose_tools(OFFERED, [], window=window_for(total // 2), share=0.10)
    assert [t.name for t in choice.tools] == [t.name for t in CORE] + [TOOL_SEARCH]
    assert choice.deferred == tuple(t.name for t in MANY)
    assert choice.sent_bytes == sum(definition_bytes(t) for t in choice.tools)
    assert choice.sent_bytes <= choice.budget_bytes < choice.offered_bytes


def test_the_core_goes_even_when_it_alone_passes_the_share() -> None:
    choice = choose_tools(OFFERED, [], window=10, share=0.10)
    assert {t.name for t in choice.tools} == {*(t.name for t in CORE), TOOL_SEARCH}
    assert choice.sent_bytes > choice.budget_bytes


def test_the_core_is_atriums_own_tools_and_the_built_in_essentials() -> None:
    assert {"workspace__read", "workspace__write", "memory__search", "sandbox__run_python"} <= (
        CORE_TOOLS
    )
    assert not any(name.startswith(("schedule__", "atrium__")) for name in CORE_TOOLS)


def test_loaded_tools_fill_the_share_newest_first() -> None:
    size = definition_bytes(MANY[0])
    core = sum(definition_bytes(t) for t in CORE) + 900  # the search's own definition
    loaded = [t.name for t in reversed(MANY)]  # the last made is the newest
    choice = choose_tools(OFFERED, loaded, window=window_for(core + 8 * size), share=0.10)
    sent = [t.name for t in choice.tools if t.name.startswith("suite__")]
    assert len(sent) >= NEWEST_ALWAYS and set(sent) == set(loaded[: len(sent)])
    assert sent == sorted(sent, key=[t.name for t in MANY].index)  # in the offered order
    assert choice.sent_bytes <= choice.budget_bytes
    assert len(choice.deferred) == len(MANY) - len(sent)


def test_the_five_newest_loaded_tools_go_even_past_the_share() -> None:
    loaded = ["suite__tool_7", "no_such__tool", "suite__tool_3", "workspace__read",
              "suite__tool_1", "suite__tool_9", "suite__tool_2", "suite__tool_5"]  # fmt: skip
    choice = choose_tools(OFFERED, loaded, window=10, share=0.10)
    sent = {t.name for t in choice.tools}
    assert {"suite__tool_7", "suite__tool_3", "suite__tool_1", "suite__tool_9"} <= sent
    assert "suite__tool_2" in sent and "suite__tool_5" not in sent
    assert len(choice.tools) == len(CORE) + NEWEST_ALWAYS + 1


def test_the_share_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    total = sum(definition_bytes(t) for t in OFFERED)
    window = window_for(total, share=0.5)
    assert choose_tools(OFFERED, [], window=window).deferred != ()
    monkeypatch.setenv(SHARE_ENV, "0.5")
    assert choose_tools(OFFERED, [], window=window).deferred == ()
    monkeypatch.setenv(SHARE_ENV, "lots")
    assert choose_tools(OFFERED, [], window=window).deferred != ()


def test_the_search_names_the_servers_it_searches() -> None:
    search = choose_tools(OFFERED, [], window=10).tools[-1]
    assert search.name == TOOL_SEARCH
    assert search.input_schema["properties"]["server"]["enum"] == ["workspace", "memory", "suite"]
    assert "Servers (tools each): workspace (1), memory (1), suite (60)." in search.description


def test_when_only_the_core_passes_the_share_every_tool_goes_without_a_search() -> None:
    choice = choose_tools(CORE, ["workspace__read"], window=10, share=0.10)
    assert choice.tools == tuple(CORE) and choice.deferred == ()

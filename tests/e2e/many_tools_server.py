"""A real MCP server with 301 generated tools, for the tool-search tests and benchmark.

Run as `python tests/e2e/many_tools_server.py` (stdio). Thirty business domains (invoices,
calendars, tickets, ...) times ten verbs (create, get, list, ...) make 300 tools named
`<verb>_<domain>`, each with a description of a few sentences and the domain's parameters; the
301st, `reconcile_bank_statement`, is the one the tests look for. Its parameter
`account_iban` is named nowhere else, not even in its own description, so a search for "iban"
finds it by its parameter name alone. Every tool answers with one line naming itself and its
arguments, so a test sees which one ran. Together the definitions weigh about as much as the
server the issue measured (~160 KB).
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver import MCPServer

DOMAINS: dict[str, tuple[str, tuple[str, ...]]] = {
    "invoice": ("a customer invoice in the billing system", ("customer_id", "due_date", "amount")),
    "ledger": ("a general ledger of the accounting books", ("fiscal_year", "entity", "account")),
    "payroll": ("a payroll run for the company's employees", ("pay_period", "cost_center")),
    "calendar": ("a shared calendar of meetings and events", ("owner_email", "time_zone")),
    "contact": ("a contact in the address book", ("full_name", "phone_number", "company")),
    "ticket": ("a support ticket in the help desk", ("queue", "priority", "assignee")),
    "repository": ("a source code repository", ("organization", "default_branch")),
    "deployment": ("a deployment of a service to an environment", ("service", "environment")),
    "dns_record": ("a DNS record of a hosted zone", ("zone", "record_type", "ttl_seconds")),
    "certificate": ("a TLS certificate of a domain", ("common_name", "issuer")),
    "bucket": ("an object storage bucket", ("region", "storage_class")),
    "database": ("a managed database instance", ("engine", "instance_size")),
    "user_account": ("a user account of the identity directory", ("username", "role")),
    "team": ("a team of people in the organization", ("team_name", "manager")),
    "document": ("a document in the shared drive", ("folder", "title")),
    "spreadsheet": ("a spreadsheet with sheets and cells", ("sheet_name", "cell_range")),
    "email": ("an email message in a mailbox", ("mailbox", "subject")),
    "newsletter": ("a newsletter sent to subscribers", ("audience", "send_at")),
    "survey": ("a survey with questions and responses", ("question_count", "closes_at")),
    "inventory": ("an inventory of stock in a warehouse", ("warehouse", "sku")),
    "shipment": ("a shipment of parcels to a customer", ("carrier", "tracking_number")),
    "purchase_order": ("a purchase order sent to a vendor", ("vendor_id", "line_items")),
    "vendor": ("a vendor the company buys from", ("vendor_name", "payment_terms")),
    "timesheet": ("a timesheet of hours worked on projects", ("employee_id", "week_start")),
    "expense": ("an expense report with receipts", ("receipt_url", "category")),
    "budget": ("a department budget for a fiscal year", ("department", "ceiling")),
    "forecast": ("a sales forecast for the coming quarters", ("horizon_months", "scenario")),
    "campaign": ("a marketing campaign across channels", ("channel", "start_date")),
    "lead": ("a sales lead in the pipeline", ("source", "score")),
    "contract": ("a signed contract with a counterparty", ("counterparty", "renewal_date")),
}

VERBS: dict[str, tuple[str, tuple[str, ...]]] = {
    "create": ("Creates {what}. Give the fields it should start with; it answers with the new "
               "record's id and status.", ()),
    "get": ("Reads one record: {what}, by its id, with every field and when it last changed.",
            ("id",)),
    "list": ("Lists records: {what}, newest first, one page at a time; filter by any field and "
             "pass the cursor of the previous page to go on.", ("page_size", "cursor")),
    "update": ("Changes fields of {what}. Only the fields given change; the others keep their "
               "values. Answers with the record as it is now.", ("id",)),
    "delete": ("Deletes {what} for good. It cannot be undone; archive it instead to keep its "
               "history.", ("id", "confirm")),
    "archive": ("Archives {what}: it leaves the default lists but keeps its history, and can be "
                "restored later.", ("id",)),
    "export": ("Exports records ({what}) as CSV or JSON to a file the author can download.",
               ("format", "since")),
    "import": ("Imports records ({what}) from a CSV or JSON file, checking every row first and "
               "reporting the rows it refused.", ("file_url", "dry_run")),
    "search": ("Searches records ({what}) by words in any text field, best matches first.",
               ("query", "limit")),
    "share": ("Shares {what} with other people, who may view or edit it as the role says.",
              ("id", "people", "access")),
}  # fmt: skip

TARGET = "reconcile_bank_statement"
TARGET_DESCRIPTION = (
    "Reconciles a bank statement with the general ledger: matches each statement line with a "
    "booked payment, flags the lines with no match, and proposes the entries that would close "
    "the difference. Nothing is booked until the author approves the proposal."
)
TARGET_PARAMETERS = ("statement_month", "account_iban")


def tool_names() -> list[str]:
    """The server's 301 tool names, in the order it lists them."""
    return [f"{verb}_{domain}" for domain in DOMAINS for verb in VERBS] + [TARGET]


def _tool(name: str, parameters: tuple[str, ...]) -> Callable[..., str]:
    """A tool function whose signature has exactly `parameters` (strings; the first required)."""

    def run(**arguments: Any) -> str:
        return json.dumps({"tool": name, "arguments": arguments}, sort_keys=True)

    run.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            inspect.Parameter(
                p,
                inspect.Parameter.KEYWORD_ONLY,
                annotation=str,
                **({} if i == 0 else {"default": ""}),
            )
            for i, p in enumerate(parameters)
        ],
        return_annotation=str,
    )
    run.__name__ = name
    return run


def build_server() -> MCPServer:
    server = MCPServer("many-tools")
    for domain, (what, fields) in DOMAINS.items():
        for verb, (template, extra) in VERBS.items():
            name = f"{verb}_{domain}"
            parameters = tuple(dict.fromkeys((*extra, *fields)))
            server.add_tool(
                _tool(name, parameters),
                name=name,
                description=template.format(what=what),
                structured_output=False,
            )
    server.add_tool(
        _tool(TARGET, TARGET_PARAMETERS),
        name=TARGET,
        description=TARGET_DESCRIPTION,
        structured_output=False,
    )
    return server


if __name__ == "__main__":
    build_server().run()

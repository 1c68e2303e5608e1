"""Builders for the inputs a session accepts: confirmations, tool results and AskUser answers.

The session helpers (``confirm``, ``deny``, ``submit_result``, ``answer``) use these for one call at
a time; build several and pass them to ``confirm_all`` / ``submit_results`` to answer a batch in one
input. Nothing here validates answers against the question: the server does, and names the
offending field in the ``InvalidArgument`` it raises.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from google.protobuf import struct_pb2

from parkway.v1 import (
    agent_service_pb2,
    ask_user_pb2,
    content_pb2,
    events_pb2,
    permission_pb2,
)

__all__ = [
    "AnswerValue",
    "Answers",
    "CallRef",
    "Other",
    "PermissionModeName",
    "RuleSpec",
    "ScopeName",
    "ask_user_answers",
    "ask_user_result",
    "call_id",
    "confirmation",
    "denial",
    "external_tool",
    "permission_mode",
    "permission_rule",
    "rule_scope",
    "tool_result",
]

CallRef = content_pb2.ToolCallBlock | str
"""A tool call: the ``ToolCallBlock`` from a REQUIRE_* event, or just its id."""

ScopeName = Literal["session", "agent", "tenant"]
"""How far an accepted rule reaches (``RULE_SCOPE_*``)."""

RuleSpec = permission_pb2.PermissionRule | str | Mapping[str, Any]
"""A rule: a ``PermissionRule``; its display form ``"Bash(npm test:*)"`` / ``"Read"``; or a mapping
``{"tool_name": ..., "rule_content": ..., "scope": ..., "behavior": ...}`` (only tool_name required)."""

PermissionModeName = Literal["default", "accept_edits", "explore", "bypass", "dont_ask"]

ResultStateName = Literal["success", "error", "denied", "interrupted"]


@dataclass(frozen=True)
class Other:
    """A free-text AskUser answer given instead of (or besides) choosing an option."""

    text: str


AnswerValue = str | Other | Sequence[str | Other]
"""One question's answer: a label, ``Other(text)``, or a list of labels (and at most one Other)."""

Answers = Mapping[str, AnswerValue] | Sequence[ask_user_pb2.AskUserAnswer | Mapping[str, Any]]
"""AskUser answers: ``{question: label | [labels] | Other(text)}``, or a list of ``AskUserAnswer``
messages or ``{"question", "selected", "other"}`` mappings."""


def call_id(call: CallRef) -> str:
    """The id of a call given as a ``ToolCallBlock`` or an id."""
    return call if isinstance(call, str) else call.id


def rule_scope(scope: ScopeName | int) -> permission_pb2.RuleScope:
    """A ``RuleScope`` value from its name (``"agent"``) or value."""
    if isinstance(scope, int):
        return cast("permission_pb2.RuleScope", scope)
    try:
        return cast(
            "permission_pb2.RuleScope",
            permission_pb2.RuleScope.Value(f"RULE_SCOPE_{scope.upper()}"),
        )
    except ValueError:
        raise ValueError(f"unknown rule scope {scope!r}: use session, agent or tenant") from None


def _behavior(value: str | int) -> permission_pb2.PermissionBehavior:
    if isinstance(value, int):
        return cast("permission_pb2.PermissionBehavior", value)
    try:
        name = f"PERMISSION_BEHAVIOR_{value.upper()}"
        return cast(
            "permission_pb2.PermissionBehavior", permission_pb2.PermissionBehavior.Value(name)
        )
    except ValueError:
        raise ValueError(f"unknown rule behavior {value!r}: use allow, deny or ask") from None


_DISPLAY_RULE = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_-]*)\s*(?:\((.*)\))?\s*$", re.DOTALL)


def permission_rule(
    spec: RuleSpec, scope: ScopeName | int = "session"
) -> permission_pb2.PermissionRule:
    """Builds a ``PermissionRule`` (behavior ALLOW unless the spec says otherwise).

    ``scope`` applies when the spec does not name its own scope. A display form without
    parentheses (``"Read"``) matches every call of the tool.
    """
    if isinstance(spec, permission_pb2.PermissionRule):
        out = permission_pb2.PermissionRule()
        out.CopyFrom(spec)
    elif isinstance(spec, str):
        match = _DISPLAY_RULE.match(spec)
        if match is None:
            raise ValueError(f"not a rule: {spec!r} (expected Tool or Tool(content))")
        out = permission_pb2.PermissionRule(tool_name=match.group(1))
        # "Bash()" is the whole tool, as "Bash" is: the server refuses a content set but empty.
        if match.group(2):
            out.rule_content = match.group(2)
    else:
        out = permission_pb2.PermissionRule(tool_name=str(spec["tool_name"]))
        if spec.get("rule_content") is not None:
            out.rule_content = str(spec["rule_content"])
        if spec.get("scope") is not None:
            out.scope = rule_scope(spec["scope"])
        if spec.get("behavior") is not None:
            out.behavior = _behavior(spec["behavior"])
    if out.behavior == permission_pb2.PERMISSION_BEHAVIOR_UNSPECIFIED:
        out.behavior = permission_pb2.PERMISSION_BEHAVIOR_ALLOW
    if out.scope == permission_pb2.RULE_SCOPE_UNSPECIFIED:
        out.scope = rule_scope(scope)
    return out


def confirmation(
    call: CallRef,
    rule: Literal["suggested"] | RuleSpec | Sequence[RuleSpec] | None = None,
    *,
    edited_input: Mapping[str, Any] | str | None = None,
    scope: ScopeName | int = "session",
) -> events_pb2.ConfirmResult:
    """Allows one pending call.

    Args:
        call: the call (a ``ToolCallBlock`` is needed for ``"suggested"``).
        rule: rules to accept with the confirmation: ``None`` (none), ``"suggested"`` (every rule
            the server suggested for the call, re-scoped to ``scope``), one rule or a list (see
            :data:`RuleSpec`; those without their own scope get ``scope``).
        edited_input: a replacement input (an object, or its JSON); the server validates it
            against the tool's schema and checks it against deny rules again. ``None`` keeps the
            model's input (the input is then not sent at all: any input sent counts as an edit).
        scope: ``"session"`` (default), ``"agent"`` or ``"tenant"``.
    """
    rules: list[permission_pb2.PermissionRule] = []
    if isinstance(rule, str) and rule == "suggested":
        if isinstance(call, str):
            raise ValueError(
                f'rule="suggested" needs the ToolCallBlock of {call!r}, not just its id'
            )
        for suggested in call.suggested_rules:
            copy = permission_rule(suggested)
            copy.scope = rule_scope(scope)
            rules.append(copy)
    elif rule is not None:
        specs: Sequence[RuleSpec] = (
            [rule] if isinstance(rule, (str, Mapping, permission_pb2.PermissionRule)) else rule
        )
        rules = [permission_rule(s, scope) for s in specs]
    tool_call = content_pb2.ToolCallBlock(id=call_id(call))
    if not isinstance(call, str):
        tool_call.name = call.name
    if edited_input is not None:
        tool_call.input = (
            edited_input if isinstance(edited_input, str) else json.dumps(edited_input)
        )
    return events_pb2.ConfirmResult(confirmed=True, tool_call=tool_call, rules=rules)


def denial(call: CallRef, reason: str = "") -> events_pb2.ConfirmResult:
    """Denies one pending call; the model sees ``reason``."""
    tool_call = content_pb2.ToolCallBlock(id=call_id(call))
    if not isinstance(call, str):
        tool_call.name = call.name
    return events_pb2.ConfirmResult(confirmed=False, tool_call=tool_call, reason=reason)


def _struct(value: Mapping[str, Any] | struct_pb2.Struct) -> struct_pb2.Struct:
    if isinstance(value, struct_pb2.Struct):
        return value
    out = struct_pb2.Struct()
    out.update(value)
    return out


def _output_blocks(
    output: str | Sequence[str | content_pb2.ToolOutputBlock | content_pb2.TextBlock],
) -> list[content_pb2.ToolOutputBlock]:
    items = [output] if isinstance(output, str) else list(output)
    blocks: list[content_pb2.ToolOutputBlock] = []
    for item in items:
        if isinstance(item, content_pb2.ToolOutputBlock):
            blocks.append(item)
        elif isinstance(item, content_pb2.TextBlock):
            blocks.append(content_pb2.ToolOutputBlock(text=item))
        elif item != "":
            blocks.append(content_pb2.ToolOutputBlock(text=content_pb2.TextBlock(text=item)))
    return blocks


def tool_result(
    call: CallRef,
    output: str | Sequence[str | content_pb2.ToolOutputBlock | content_pb2.TextBlock] = "",
    *,
    state: ResultStateName | str | int = "success",
    metadata: Mapping[str, Any] | struct_pb2.Struct | None = None,
) -> content_pb2.ToolResultBlock:
    """The result of one external call.

    Args:
        output: what the model reads: a string, or a list of strings / text / data blocks.
        state: ``"success"`` (default), ``"error"``, ``"denied"`` or ``"interrupted"`` (or a
            ``ToolResultState`` value).
        metadata: structured data, validated by the server against the tool's metadata schema.
    """
    if isinstance(state, int):
        state_value = cast("content_pb2.ToolResultState", state)
    else:
        name = f"TOOL_RESULT_STATE_{state.upper()}"
        state_value = cast("content_pb2.ToolResultState", content_pb2.ToolResultState.Value(name))
    block = content_pb2.ToolResultBlock(
        id=call_id(call), output=_output_blocks(output), state=state_value
    )
    if not isinstance(call, str):
        block.name = call.name
    if metadata is not None:
        block.metadata.SetInParent()  # present even when empty: the schema still applies
        block.metadata.CopyFrom(_struct(metadata))
    return block


def _one_answer(question: str, value: AnswerValue) -> ask_user_pb2.AskUserAnswer:
    answer = ask_user_pb2.AskUserAnswer(question=question)
    items: Sequence[str | Other] = [value] if isinstance(value, (str, Other)) else value
    for item in items:
        if isinstance(item, Other):
            answer.other = item.text
        else:
            answer.selected.append(item)
    return answer


def ask_user_answers(answers: Answers) -> ask_user_pb2.AskUserMetadata:
    """Builds the typed AskUser answers (see :data:`Answers`)."""
    out = ask_user_pb2.AskUserMetadata()
    if isinstance(answers, Mapping):
        for question, value in answers.items():
            out.answers.append(_one_answer(question, value))
        return out
    for item in answers:
        if isinstance(item, ask_user_pb2.AskUserAnswer):
            out.answers.append(item)
            continue
        answer = ask_user_pb2.AskUserAnswer(
            question=str(item["question"]), selected=list(item.get("selected") or [])
        )
        if item.get("other") is not None:
            answer.other = str(item["other"])
        out.answers.append(answer)
    return out


def ask_user_result(call: CallRef, answers: Answers) -> content_pb2.ToolResultBlock:
    """The result of an AskUser call: its answers (the server renders what the model reads)."""
    block = content_pb2.ToolResultBlock(
        id=call_id(call),
        name="AskUser",
        state=content_pb2.TOOL_RESULT_STATE_SUCCESS,
    )
    block.ask_user.CopyFrom(ask_user_answers(answers))
    return block


def external_tool(
    spec: agent_service_pb2.ExternalTool | Mapping[str, Any],
) -> agent_service_pb2.ExternalTool:
    """An external tool for ``create_session``: an ``ExternalTool``, or a mapping with ``name``,
    ``description``, ``input_schema`` and ``metadata_schema`` (schemas as dicts or JSON strings)."""
    if isinstance(spec, agent_service_pb2.ExternalTool):
        return spec
    tool = agent_service_pb2.ExternalTool(
        name=str(spec["name"]), description=str(spec.get("description", ""))
    )
    for key in ("input_schema", "metadata_schema"):
        value = spec.get(key)
        if value is not None:
            setattr(tool, key, value if isinstance(value, str) else json.dumps(value))
    return tool


def permission_mode(mode: PermissionModeName | int | None) -> permission_pb2.PermissionMode:
    """A ``PermissionMode`` value from its name (``"accept_edits"``) or value; None = UNSPECIFIED."""
    if mode is None:
        return permission_pb2.PERMISSION_MODE_UNSPECIFIED
    if isinstance(mode, int):
        return cast("permission_pb2.PermissionMode", mode)
    try:
        name = f"PERMISSION_MODE_{mode.upper()}"
        return cast("permission_pb2.PermissionMode", permission_pb2.PermissionMode.Value(name))
    except ValueError:
        raise ValueError(f"unknown permission mode {mode!r}") from None

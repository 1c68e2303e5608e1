"""A small approval frontend for Parkway: sends one message, streams the reply, approves tool calls.

    python approve.py "make a file called notes.txt" --server 127.0.0.1:50051 --agent assistant

Every call that needs confirmation is approved (with the server's suggested rules when
--accept-suggested is given, so similar calls stop asking); AskUser questions get their first
option; other external tools are answered with an error. Prints the streamed text and the answer.
"""

from __future__ import annotations

import argparse
import asyncio

import parkway
from parkway.v1 import content_pb2, permission_pb2


def shown(rule: permission_pb2.PermissionRule) -> str:
    """A rule in its display form, e.g. Bash(touch:*)."""
    return (
        f"{rule.tool_name}({rule.rule_content})"
        if rule.HasField("rule_content")
        else rule.tool_name
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("message", help="what to ask the agent")
    parser.add_argument("--server", default="127.0.0.1:50051", help="Parkway address HOST:PORT")
    parser.add_argument("--agent", default="assistant", help="agent id")
    parser.add_argument("--token", help="bearer token, when the server requires one")
    parser.add_argument(
        "--accept-suggested",
        action="store_true",
        help="accept the suggested rules along with each approval",
    )
    args = parser.parse_args()

    async with parkway.AsyncClient(args.server, token=args.token) as client:
        session = await client.create_session(args.agent)
        chat = await client.attach(session.id)
        print(f"[session] {session.id}")
        texts: dict[str, str] = {}  # text block id -> its text, in order
        events, last = chat.send(args.message), None
        while True:
            async for event in events:
                last = event
                if event.kind == "text_block_delta":
                    print(event.text, end="", flush=True)
                    block = event.raw.text_block_delta.block_id
                    texts[block] = texts.get(block, "") + event.text
                elif event.kind == "text_block_end":
                    print()
                elif event.kind == "require_user_confirm":
                    for call in event.tool_calls:
                        accept = args.accept_suggested and len(call.suggested_rules) > 0
                        rules = ", ".join(map(shown, call.suggested_rules)) if accept else "none"
                        print(f"[approve] {call.name} {call.input} (rules: {rules})")
                        await chat.confirm(call, "suggested" if accept else None)
                elif event.kind == "require_external_execution":
                    for call in event.tool_calls:
                        if call.name == "AskUser":
                            answers = {
                                q.question: q.options[0].label for q in call.ask_user.questions
                            }
                            for question, label in answers.items():
                                print(f"[ask] {question} -> {label}")
                            await chat.answer(call, answers)
                        else:
                            await chat.submit_result(
                                call, f"{call.name} is not available here", "error"
                            )
            if last is None or last.kind == "reply_end":
                break
            events, last = chat.until_settled(), None  # parked: the answers above resume it
        reason = content_pb2.FinishedReason.Name(last.finished_reason if last else 0)
        answer = list(texts.values())[-1] if texts else ""
        print(f"[final] {answer} ({reason.removeprefix('FINISHED_REASON_').lower()})")


if __name__ == "__main__":
    asyncio.run(main())

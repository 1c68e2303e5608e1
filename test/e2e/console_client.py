"""The Python side of console-browser.test.ts: a client that starts replies which park, then waits
while a person answers them in the web console.

Usage: python console_client.py ADDRESS TOKEN MESSAGE... Creates a session of agent "assistant"
with the external tool Lookup, and for each MESSAGE starts a reply and follows it until it
finishes. Writes one JSON object per line:
``{"parked": SESSION, "reply": ID, "calls": [NAME...]}`` each time the reply parks,
``{"answers": [...]}`` when an AskUser result arrives, and ``{"finished": REASON, "text": TEXT}``
when the reply ends. Exits 1 with the error on stderr when anything fails.
"""

from __future__ import annotations

import json
import sys

from google.protobuf.json_format import MessageToDict
from parkway import Client, Session
from parkway.v1 import content_pb2


def emit(record: dict[str, object]) -> None:
    print(json.dumps(record), flush=True)


def follow(session: Session, message: str) -> None:
    text = ""
    events = session.send(message, timeout=30)
    while True:
        for event in events:
            if event.kind == "text_block_delta":
                text += event.text
            elif event.kind == "tool_result_end" and event.raw.tool_result_end.HasField(
                "ask_user"
            ):
                emit(
                    {
                        "answers": MessageToDict(event.raw.tool_result_end.ask_user)[
                            "answers"
                        ]
                    }
                )
            elif event.kind == "reply_parked":
                calls = [c.name for c in session.pending.values()]
                emit({"parked": session.id, "reply": event.reply_id, "calls": calls})
            elif event.kind == "reply_end":
                reason = content_pb2.FinishedReason.Name(event.finished_reason)
                emit({"finished": reason, "text": text})
                return
        events = session.until_settled(timeout=60)


def main() -> None:
    address, token, *messages = sys.argv[1:]
    with Client(address, token or None) as client:
        lookup = {
            "name": "Lookup",
            "description": "Looks a key up; a person answers.",
            "input_schema": json.dumps(
                {"type": "object", "properties": {"key": {"type": "string"}}}
            ),
        }
        created = client.create_session("assistant", external_tools=[lookup])
        with client.attach(created.id) as session:
            for message in messages:
                follow(session, message)


if __name__ == "__main__":
    main()

"""A scenario's names for tool calls, bound to the ids the server assigned.

See test/scenarios/README.md: an expectation ``tool_call_start X`` binds X to its event's call id
(again: rebinds it); everywhere else X stands for the id it is bound to. A name never bound stands
for itself.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+", re.ASCII)


class CallAliases:
    def __init__(self) -> None:
        self._ids: dict[str, str] = {}

    def bind(self, alias: str, call_id: str) -> None:
        self._ids[alias] = call_id

    def id(self, alias: str) -> str:
        """The id `alias` stands for."""
        return self._ids.get(alias, alias)

    def alias(self, call_id: str) -> str:
        """The alias bound to `call_id` now, else `call_id` itself."""
        for alias, bound in self._ids.items():
            if bound == call_id:
                return alias
        return call_id

    def pattern(self, source: str) -> str:
        """An error message pattern with every word that is a bound alias replaced by its id
        (escaped)."""

        def replace(word: re.Match[str]) -> str:
            bound = self._ids.get(word[0])
            return word[0] if bound is None else re.escape(bound)

        return _WORD.sub(replace, source)

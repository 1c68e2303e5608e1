import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class PermissionBehavior(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PERMISSION_BEHAVIOR_UNSPECIFIED: _ClassVar[PermissionBehavior]
    PERMISSION_BEHAVIOR_ALLOW: _ClassVar[PermissionBehavior]
    PERMISSION_BEHAVIOR_DENY: _ClassVar[PermissionBehavior]
    PERMISSION_BEHAVIOR_ASK: _ClassVar[PermissionBehavior]

class RuleScope(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RULE_SCOPE_UNSPECIFIED: _ClassVar[RuleScope]
    RULE_SCOPE_SESSION: _ClassVar[RuleScope]
    RULE_SCOPE_AGENT: _ClassVar[RuleScope]
    RULE_SCOPE_TENANT: _ClassVar[RuleScope]

class RuleSource(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RULE_SOURCE_UNSPECIFIED: _ClassVar[RuleSource]
    RULE_SOURCE_SUGGESTED: _ClassVar[RuleSource]
    RULE_SOURCE_CONFIRMATION: _ClassVar[RuleSource]
    RULE_SOURCE_API: _ClassVar[RuleSource]
    RULE_SOURCE_CONFIG: _ClassVar[RuleSource]

class PermissionMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PERMISSION_MODE_UNSPECIFIED: _ClassVar[PermissionMode]
    PERMISSION_MODE_DEFAULT: _ClassVar[PermissionMode]
    PERMISSION_MODE_ACCEPT_EDITS: _ClassVar[PermissionMode]
    PERMISSION_MODE_EXPLORE: _ClassVar[PermissionMode]
    PERMISSION_MODE_BYPASS: _ClassVar[PermissionMode]
    PERMISSION_MODE_DONT_ASK: _ClassVar[PermissionMode]

class PolicyResult(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    POLICY_RESULT_UNSPECIFIED: _ClassVar[PolicyResult]
    POLICY_RESULT_ALLOW: _ClassVar[PolicyResult]
    POLICY_RESULT_ASK: _ClassVar[PolicyResult]
    POLICY_RESULT_DENY: _ClassVar[PolicyResult]
    POLICY_RESULT_ERROR: _ClassVar[PolicyResult]
    POLICY_RESULT_TIMEOUT: _ClassVar[PolicyResult]
PERMISSION_BEHAVIOR_UNSPECIFIED: PermissionBehavior
PERMISSION_BEHAVIOR_ALLOW: PermissionBehavior
PERMISSION_BEHAVIOR_DENY: PermissionBehavior
PERMISSION_BEHAVIOR_ASK: PermissionBehavior
RULE_SCOPE_UNSPECIFIED: RuleScope
RULE_SCOPE_SESSION: RuleScope
RULE_SCOPE_AGENT: RuleScope
RULE_SCOPE_TENANT: RuleScope
RULE_SOURCE_UNSPECIFIED: RuleSource
RULE_SOURCE_SUGGESTED: RuleSource
RULE_SOURCE_CONFIRMATION: RuleSource
RULE_SOURCE_API: RuleSource
RULE_SOURCE_CONFIG: RuleSource
PERMISSION_MODE_UNSPECIFIED: PermissionMode
PERMISSION_MODE_DEFAULT: PermissionMode
PERMISSION_MODE_ACCEPT_EDITS: PermissionMode
PERMISSION_MODE_EXPLORE: PermissionMode
PERMISSION_MODE_BYPASS: PermissionMode
PERMISSION_MODE_DONT_ASK: PermissionMode
POLICY_RESULT_UNSPECIFIED: PolicyResult
POLICY_RESULT_ALLOW: PolicyResult
POLICY_RESULT_ASK: PolicyResult
POLICY_RESULT_DENY: PolicyResult
POLICY_RESULT_ERROR: PolicyResult
POLICY_RESULT_TIMEOUT: PolicyResult

class PermissionRule(_message.Message):
    __slots__ = ("id", "tool_name", "rule_content", "behavior", "scope", "source", "created_by", "created_at", "session_id", "agent_id", "tool_call_id")
    ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    RULE_CONTENT_FIELD_NUMBER: _ClassVar[int]
    BEHAVIOR_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    CREATED_BY_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    tool_name: str
    rule_content: str
    behavior: PermissionBehavior
    scope: RuleScope
    source: RuleSource
    created_by: str
    created_at: _timestamp_pb2.Timestamp
    session_id: str
    agent_id: str
    tool_call_id: str
    def __init__(self, id: _Optional[str] = ..., tool_name: _Optional[str] = ..., rule_content: _Optional[str] = ..., behavior: _Optional[_Union[PermissionBehavior, str]] = ..., scope: _Optional[_Union[RuleScope, str]] = ..., source: _Optional[_Union[RuleSource, str]] = ..., created_by: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., session_id: _Optional[str] = ..., agent_id: _Optional[str] = ..., tool_call_id: _Optional[str] = ...) -> None: ...

class PermissionDecision(_message.Message):
    __slots__ = ("behavior", "reason", "rule", "check", "bypass_immune", "suggested_rules", "policy")
    BEHAVIOR_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    RULE_FIELD_NUMBER: _ClassVar[int]
    CHECK_FIELD_NUMBER: _ClassVar[int]
    BYPASS_IMMUNE_FIELD_NUMBER: _ClassVar[int]
    SUGGESTED_RULES_FIELD_NUMBER: _ClassVar[int]
    POLICY_FIELD_NUMBER: _ClassVar[int]
    behavior: PermissionBehavior
    reason: str
    rule: PermissionRule
    check: str
    bypass_immune: bool
    suggested_rules: _containers.RepeatedCompositeFieldContainer[PermissionRule]
    policy: PolicyAnswer
    def __init__(self, behavior: _Optional[_Union[PermissionBehavior, str]] = ..., reason: _Optional[str] = ..., rule: _Optional[_Union[PermissionRule, _Mapping]] = ..., check: _Optional[str] = ..., bypass_immune: _Optional[bool] = ..., suggested_rules: _Optional[_Iterable[_Union[PermissionRule, _Mapping]]] = ..., policy: _Optional[_Union[PolicyAnswer, _Mapping]] = ...) -> None: ...

class PolicyAnswer(_message.Message):
    __slots__ = ("result", "reason", "latency_ms", "engine_behavior", "engine_check", "ignored")
    RESULT_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    LATENCY_MS_FIELD_NUMBER: _ClassVar[int]
    ENGINE_BEHAVIOR_FIELD_NUMBER: _ClassVar[int]
    ENGINE_CHECK_FIELD_NUMBER: _ClassVar[int]
    IGNORED_FIELD_NUMBER: _ClassVar[int]
    result: PolicyResult
    reason: str
    latency_ms: float
    engine_behavior: PermissionBehavior
    engine_check: str
    ignored: bool
    def __init__(self, result: _Optional[_Union[PolicyResult, str]] = ..., reason: _Optional[str] = ..., latency_ms: _Optional[float] = ..., engine_behavior: _Optional[_Union[PermissionBehavior, str]] = ..., engine_check: _Optional[str] = ..., ignored: _Optional[bool] = ...) -> None: ...

class ListRulesRequest(_message.Message):
    __slots__ = ("session_id", "agent_id", "scope")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    agent_id: str
    scope: RuleScope
    def __init__(self, session_id: _Optional[str] = ..., agent_id: _Optional[str] = ..., scope: _Optional[_Union[RuleScope, str]] = ...) -> None: ...

class ListRulesResponse(_message.Message):
    __slots__ = ("rules",)
    RULES_FIELD_NUMBER: _ClassVar[int]
    rules: _containers.RepeatedCompositeFieldContainer[PermissionRule]
    def __init__(self, rules: _Optional[_Iterable[_Union[PermissionRule, _Mapping]]] = ...) -> None: ...

class AddRulesRequest(_message.Message):
    __slots__ = ("rules",)
    RULES_FIELD_NUMBER: _ClassVar[int]
    rules: _containers.RepeatedCompositeFieldContainer[PermissionRule]
    def __init__(self, rules: _Optional[_Iterable[_Union[PermissionRule, _Mapping]]] = ...) -> None: ...

class AddRulesResponse(_message.Message):
    __slots__ = ("rules", "added")
    RULES_FIELD_NUMBER: _ClassVar[int]
    ADDED_FIELD_NUMBER: _ClassVar[int]
    rules: _containers.RepeatedCompositeFieldContainer[PermissionRule]
    added: int
    def __init__(self, rules: _Optional[_Iterable[_Union[PermissionRule, _Mapping]]] = ..., added: _Optional[int] = ...) -> None: ...

class RemoveRuleRequest(_message.Message):
    __slots__ = ("rule_id",)
    RULE_ID_FIELD_NUMBER: _ClassVar[int]
    rule_id: str
    def __init__(self, rule_id: _Optional[str] = ...) -> None: ...

class RemoveRuleResponse(_message.Message):
    __slots__ = ("rule",)
    RULE_FIELD_NUMBER: _ClassVar[int]
    rule: PermissionRule
    def __init__(self, rule: _Optional[_Union[PermissionRule, _Mapping]] = ...) -> None: ...

class SetModeRequest(_message.Message):
    __slots__ = ("session_id", "mode")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    mode: PermissionMode
    def __init__(self, session_id: _Optional[str] = ..., mode: _Optional[_Union[PermissionMode, str]] = ...) -> None: ...

class SetModeResponse(_message.Message):
    __slots__ = ("mode",)
    MODE_FIELD_NUMBER: _ClassVar[int]
    mode: PermissionMode
    def __init__(self, mode: _Optional[_Union[PermissionMode, str]] = ...) -> None: ...

class ExplainRequest(_message.Message):
    __slots__ = ("session_id", "agent_id", "tool_name", "input")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    agent_id: str
    tool_name: str
    input: str
    def __init__(self, session_id: _Optional[str] = ..., agent_id: _Optional[str] = ..., tool_name: _Optional[str] = ..., input: _Optional[str] = ...) -> None: ...

class ExplainResponse(_message.Message):
    __slots__ = ("decision",)
    DECISION_FIELD_NUMBER: _ClassVar[int]
    decision: PermissionDecision
    def __init__(self, decision: _Optional[_Union[PermissionDecision, _Mapping]] = ...) -> None: ...

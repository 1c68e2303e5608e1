import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from parkway.v1 import content_pb2 as _content_pb2
from parkway.v1 import permission_pb2 as _permission_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class AuditKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    AUDIT_KIND_UNSPECIFIED: _ClassVar[AuditKind]
    AUDIT_KIND_ALLOWED_BY_RULE: _ClassVar[AuditKind]
    AUDIT_KIND_ALLOWED_BY_CHECK: _ClassVar[AuditKind]
    AUDIT_KIND_DENIED_BY_RULE: _ClassVar[AuditKind]
    AUDIT_KIND_DENIED_BY_CHECK: _ClassVar[AuditKind]
    AUDIT_KIND_ASKED: _ClassVar[AuditKind]
    AUDIT_KIND_CONFIRMED: _ClassVar[AuditKind]
    AUDIT_KIND_DENIED: _ClassVar[AuditKind]
    AUDIT_KIND_EXPIRED: _ClassVar[AuditKind]
    AUDIT_KIND_EXTERNAL_RESULT: _ClassVar[AuditKind]
    AUDIT_KIND_ANSWERED: _ClassVar[AuditKind]
    AUDIT_KIND_INTERRUPTED: _ClassVar[AuditKind]
    AUDIT_KIND_RULE_ADDED: _ClassVar[AuditKind]
    AUDIT_KIND_RULE_REMOVED: _ClassVar[AuditKind]
    AUDIT_KIND_MODE_SET: _ClassVar[AuditKind]
AUDIT_KIND_UNSPECIFIED: AuditKind
AUDIT_KIND_ALLOWED_BY_RULE: AuditKind
AUDIT_KIND_ALLOWED_BY_CHECK: AuditKind
AUDIT_KIND_DENIED_BY_RULE: AuditKind
AUDIT_KIND_DENIED_BY_CHECK: AuditKind
AUDIT_KIND_ASKED: AuditKind
AUDIT_KIND_CONFIRMED: AuditKind
AUDIT_KIND_DENIED: AuditKind
AUDIT_KIND_EXPIRED: AuditKind
AUDIT_KIND_EXTERNAL_RESULT: AuditKind
AUDIT_KIND_ANSWERED: AuditKind
AUDIT_KIND_INTERRUPTED: AuditKind
AUDIT_KIND_RULE_ADDED: AuditKind
AUDIT_KIND_RULE_REMOVED: AuditKind
AUDIT_KIND_MODE_SET: AuditKind

class AuditRecord(_message.Message):
    __slots__ = ("id", "time", "kind", "actor", "session_id", "reply_id", "tool_call_id", "tool_name", "rule", "rule_id", "check", "reason", "accepted_rules", "input_edited", "selected", "answered_other", "result_state", "mode", "scope", "policy")
    ID_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    ACTOR_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    REPLY_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    RULE_FIELD_NUMBER: _ClassVar[int]
    RULE_ID_FIELD_NUMBER: _ClassVar[int]
    CHECK_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    ACCEPTED_RULES_FIELD_NUMBER: _ClassVar[int]
    INPUT_EDITED_FIELD_NUMBER: _ClassVar[int]
    SELECTED_FIELD_NUMBER: _ClassVar[int]
    ANSWERED_OTHER_FIELD_NUMBER: _ClassVar[int]
    RESULT_STATE_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    POLICY_FIELD_NUMBER: _ClassVar[int]
    id: str
    time: _timestamp_pb2.Timestamp
    kind: AuditKind
    actor: str
    session_id: str
    reply_id: str
    tool_call_id: str
    tool_name: str
    rule: str
    rule_id: str
    check: str
    reason: str
    accepted_rules: _containers.RepeatedScalarFieldContainer[str]
    input_edited: bool
    selected: _containers.RepeatedScalarFieldContainer[str]
    answered_other: bool
    result_state: _content_pb2.ToolResultState
    mode: _permission_pb2.PermissionMode
    scope: _permission_pb2.RuleScope
    policy: _permission_pb2.PolicyAnswer
    def __init__(self, id: _Optional[str] = ..., time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., kind: _Optional[_Union[AuditKind, str]] = ..., actor: _Optional[str] = ..., session_id: _Optional[str] = ..., reply_id: _Optional[str] = ..., tool_call_id: _Optional[str] = ..., tool_name: _Optional[str] = ..., rule: _Optional[str] = ..., rule_id: _Optional[str] = ..., check: _Optional[str] = ..., reason: _Optional[str] = ..., accepted_rules: _Optional[_Iterable[str]] = ..., input_edited: _Optional[bool] = ..., selected: _Optional[_Iterable[str]] = ..., answered_other: _Optional[bool] = ..., result_state: _Optional[_Union[_content_pb2.ToolResultState, str]] = ..., mode: _Optional[_Union[_permission_pb2.PermissionMode, str]] = ..., scope: _Optional[_Union[_permission_pb2.RuleScope, str]] = ..., policy: _Optional[_Union[_permission_pb2.PolicyAnswer, _Mapping]] = ...) -> None: ...

class ListAuditRecordsRequest(_message.Message):
    __slots__ = ("session_id", "tool_call_id", "page_size", "page_token")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    tool_call_id: str
    page_size: int
    page_token: str
    def __init__(self, session_id: _Optional[str] = ..., tool_call_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListAuditRecordsResponse(_message.Message):
    __slots__ = ("records", "next_page_token")
    RECORDS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    records: _containers.RepeatedCompositeFieldContainer[AuditRecord]
    next_page_token: str
    def __init__(self, records: _Optional[_Iterable[_Union[AuditRecord, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class DeadLetter(_message.Message):
    __slots__ = ("id", "event", "url", "session_id", "reply_id", "attempts", "last_error", "created_at", "dead_at", "body")
    ID_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    REPLY_ID_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    LAST_ERROR_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    DEAD_AT_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    id: str
    event: str
    url: str
    session_id: str
    reply_id: str
    attempts: int
    last_error: str
    created_at: _timestamp_pb2.Timestamp
    dead_at: _timestamp_pb2.Timestamp
    body: str
    def __init__(self, id: _Optional[str] = ..., event: _Optional[str] = ..., url: _Optional[str] = ..., session_id: _Optional[str] = ..., reply_id: _Optional[str] = ..., attempts: _Optional[int] = ..., last_error: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., dead_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., body: _Optional[str] = ...) -> None: ...

class ListDeadLettersRequest(_message.Message):
    __slots__ = ("page_size", "page_token")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListDeadLettersResponse(_message.Message):
    __slots__ = ("dead_letters", "next_page_token")
    DEAD_LETTERS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    dead_letters: _containers.RepeatedCompositeFieldContainer[DeadLetter]
    next_page_token: str
    def __init__(self, dead_letters: _Optional[_Iterable[_Union[DeadLetter, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

import datetime

from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from parkway.v1 import ask_user_pb2 as _ask_user_pb2
from parkway.v1 import permission_pb2 as _permission_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Role(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ROLE_UNSPECIFIED: _ClassVar[Role]
    ROLE_USER: _ClassVar[Role]
    ROLE_ASSISTANT: _ClassVar[Role]
    ROLE_SYSTEM: _ClassVar[Role]

class FinishedReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FINISHED_REASON_UNSPECIFIED: _ClassVar[FinishedReason]
    FINISHED_REASON_COMPLETED: _ClassVar[FinishedReason]
    FINISHED_REASON_INTERRUPTED: _ClassVar[FinishedReason]
    FINISHED_REASON_EXCEED_MAX_ITERS: _ClassVar[FinishedReason]
    FINISHED_REASON_ERROR: _ClassVar[FinishedReason]

class ToolResultState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TOOL_RESULT_STATE_UNSPECIFIED: _ClassVar[ToolResultState]
    TOOL_RESULT_STATE_SUCCESS: _ClassVar[ToolResultState]
    TOOL_RESULT_STATE_ERROR: _ClassVar[ToolResultState]
    TOOL_RESULT_STATE_INTERRUPTED: _ClassVar[ToolResultState]
    TOOL_RESULT_STATE_DENIED: _ClassVar[ToolResultState]
    TOOL_RESULT_STATE_RUNNING: _ClassVar[ToolResultState]

class ToolCallState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TOOL_CALL_STATE_UNSPECIFIED: _ClassVar[ToolCallState]
    TOOL_CALL_STATE_PENDING: _ClassVar[ToolCallState]
    TOOL_CALL_STATE_ASKING: _ClassVar[ToolCallState]
    TOOL_CALL_STATE_ALLOWED: _ClassVar[ToolCallState]
    TOOL_CALL_STATE_SUBMITTED: _ClassVar[ToolCallState]
    TOOL_CALL_STATE_FINISHED: _ClassVar[ToolCallState]
ROLE_UNSPECIFIED: Role
ROLE_USER: Role
ROLE_ASSISTANT: Role
ROLE_SYSTEM: Role
FINISHED_REASON_UNSPECIFIED: FinishedReason
FINISHED_REASON_COMPLETED: FinishedReason
FINISHED_REASON_INTERRUPTED: FinishedReason
FINISHED_REASON_EXCEED_MAX_ITERS: FinishedReason
FINISHED_REASON_ERROR: FinishedReason
TOOL_RESULT_STATE_UNSPECIFIED: ToolResultState
TOOL_RESULT_STATE_SUCCESS: ToolResultState
TOOL_RESULT_STATE_ERROR: ToolResultState
TOOL_RESULT_STATE_INTERRUPTED: ToolResultState
TOOL_RESULT_STATE_DENIED: ToolResultState
TOOL_RESULT_STATE_RUNNING: ToolResultState
TOOL_CALL_STATE_UNSPECIFIED: ToolCallState
TOOL_CALL_STATE_PENDING: ToolCallState
TOOL_CALL_STATE_ASKING: ToolCallState
TOOL_CALL_STATE_ALLOWED: ToolCallState
TOOL_CALL_STATE_SUBMITTED: ToolCallState
TOOL_CALL_STATE_FINISHED: ToolCallState

class Msg(_message.Message):
    __slots__ = ("id", "name", "role", "content", "finished_reason", "usage", "metadata", "error")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    FINISHED_REASON_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    role: Role
    content: _containers.RepeatedCompositeFieldContainer[ContentBlock]
    finished_reason: FinishedReason
    usage: Usage
    metadata: _struct_pb2.Struct
    error: Failure
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., role: _Optional[_Union[Role, str]] = ..., content: _Optional[_Iterable[_Union[ContentBlock, _Mapping]]] = ..., finished_reason: _Optional[_Union[FinishedReason, str]] = ..., usage: _Optional[_Union[Usage, _Mapping]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., error: _Optional[_Union[Failure, _Mapping]] = ...) -> None: ...

class Failure(_message.Message):
    __slots__ = ("code", "message")
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    code: str
    message: str
    def __init__(self, code: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...

class Usage(_message.Message):
    __slots__ = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
    INPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    CACHE_READ_TOKENS_FIELD_NUMBER: _ClassVar[int]
    CACHE_WRITE_TOKENS_FIELD_NUMBER: _ClassVar[int]
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    def __init__(self, input_tokens: _Optional[int] = ..., output_tokens: _Optional[int] = ..., cache_read_tokens: _Optional[int] = ..., cache_write_tokens: _Optional[int] = ...) -> None: ...

class ContentBlock(_message.Message):
    __slots__ = ("text", "thinking", "data", "tool_call", "tool_result")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    THINKING_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_FIELD_NUMBER: _ClassVar[int]
    TOOL_RESULT_FIELD_NUMBER: _ClassVar[int]
    text: TextBlock
    thinking: ThinkingBlock
    data: DataBlock
    tool_call: ToolCallBlock
    tool_result: ToolResultBlock
    def __init__(self, text: _Optional[_Union[TextBlock, _Mapping]] = ..., thinking: _Optional[_Union[ThinkingBlock, _Mapping]] = ..., data: _Optional[_Union[DataBlock, _Mapping]] = ..., tool_call: _Optional[_Union[ToolCallBlock, _Mapping]] = ..., tool_result: _Optional[_Union[ToolResultBlock, _Mapping]] = ...) -> None: ...

class TextBlock(_message.Message):
    __slots__ = ("id", "text")
    ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    id: str
    text: str
    def __init__(self, id: _Optional[str] = ..., text: _Optional[str] = ...) -> None: ...

class ThinkingBlock(_message.Message):
    __slots__ = ("id", "thinking")
    ID_FIELD_NUMBER: _ClassVar[int]
    THINKING_FIELD_NUMBER: _ClassVar[int]
    id: str
    thinking: str
    def __init__(self, id: _Optional[str] = ..., thinking: _Optional[str] = ...) -> None: ...

class DataBlock(_message.Message):
    __slots__ = ("id", "media_type", "data", "url")
    ID_FIELD_NUMBER: _ClassVar[int]
    MEDIA_TYPE_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    id: str
    media_type: str
    data: bytes
    url: str
    def __init__(self, id: _Optional[str] = ..., media_type: _Optional[str] = ..., data: _Optional[bytes] = ..., url: _Optional[str] = ...) -> None: ...

class ToolCallBlock(_message.Message):
    __slots__ = ("id", "name", "input", "state", "suggested_rules", "ask_user", "decision", "expires_at", "asked_by")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    SUGGESTED_RULES_FIELD_NUMBER: _ClassVar[int]
    ASK_USER_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    ASKED_BY_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    input: str
    state: ToolCallState
    suggested_rules: _containers.RepeatedCompositeFieldContainer[_permission_pb2.PermissionRule]
    ask_user: _ask_user_pb2.AskUserInput
    decision: _permission_pb2.PermissionDecision
    expires_at: _timestamp_pb2.Timestamp
    asked_by: str
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., input: _Optional[str] = ..., state: _Optional[_Union[ToolCallState, str]] = ..., suggested_rules: _Optional[_Iterable[_Union[_permission_pb2.PermissionRule, _Mapping]]] = ..., ask_user: _Optional[_Union[_ask_user_pb2.AskUserInput, _Mapping]] = ..., decision: _Optional[_Union[_permission_pb2.PermissionDecision, _Mapping]] = ..., expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., asked_by: _Optional[str] = ...) -> None: ...

class ToolResultBlock(_message.Message):
    __slots__ = ("id", "name", "output", "state", "metadata", "ask_user")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    ASK_USER_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    output: _containers.RepeatedCompositeFieldContainer[ToolOutputBlock]
    state: ToolResultState
    metadata: _struct_pb2.Struct
    ask_user: _ask_user_pb2.AskUserMetadata
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., output: _Optional[_Iterable[_Union[ToolOutputBlock, _Mapping]]] = ..., state: _Optional[_Union[ToolResultState, str]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., ask_user: _Optional[_Union[_ask_user_pb2.AskUserMetadata, _Mapping]] = ...) -> None: ...

class ToolOutputBlock(_message.Message):
    __slots__ = ("text", "data")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    text: TextBlock
    data: DataBlock
    def __init__(self, text: _Optional[_Union[TextBlock, _Mapping]] = ..., data: _Optional[_Union[DataBlock, _Mapping]] = ...) -> None: ...

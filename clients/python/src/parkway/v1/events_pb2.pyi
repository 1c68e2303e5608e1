import datetime

from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.rpc import status_pb2 as _status_pb2
from parkway.v1 import ask_user_pb2 as _ask_user_pb2
from parkway.v1 import content_pb2 as _content_pb2
from parkway.v1 import permission_pb2 as _permission_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ClientEvent(_message.Message):
    __slots__ = ("session_id", "request_id", "attach", "user_message", "user_confirm_result", "external_execution_result", "user_interrupt")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    ATTACH_FIELD_NUMBER: _ClassVar[int]
    USER_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    USER_CONFIRM_RESULT_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_EXECUTION_RESULT_FIELD_NUMBER: _ClassVar[int]
    USER_INTERRUPT_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    request_id: str
    attach: Attach
    user_message: UserMessage
    user_confirm_result: UserConfirmResult
    external_execution_result: ExternalExecutionResult
    user_interrupt: UserInterrupt
    def __init__(self, session_id: _Optional[str] = ..., request_id: _Optional[str] = ..., attach: _Optional[_Union[Attach, _Mapping]] = ..., user_message: _Optional[_Union[UserMessage, _Mapping]] = ..., user_confirm_result: _Optional[_Union[UserConfirmResult, _Mapping]] = ..., external_execution_result: _Optional[_Union[ExternalExecutionResult, _Mapping]] = ..., user_interrupt: _Optional[_Union[UserInterrupt, _Mapping]] = ...) -> None: ...

class Attach(_message.Message):
    __slots__ = ("session_id", "after_seq")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    AFTER_SEQ_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    after_seq: int
    def __init__(self, session_id: _Optional[str] = ..., after_seq: _Optional[int] = ...) -> None: ...

class UserMessage(_message.Message):
    __slots__ = ("text", "content")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    text: str
    content: _containers.RepeatedCompositeFieldContainer[_content_pb2.ContentBlock]
    def __init__(self, text: _Optional[str] = ..., content: _Optional[_Iterable[_Union[_content_pb2.ContentBlock, _Mapping]]] = ...) -> None: ...

class UserConfirmResult(_message.Message):
    __slots__ = ("reply_id", "confirm_results")
    REPLY_ID_FIELD_NUMBER: _ClassVar[int]
    CONFIRM_RESULTS_FIELD_NUMBER: _ClassVar[int]
    reply_id: str
    confirm_results: _containers.RepeatedCompositeFieldContainer[ConfirmResult]
    def __init__(self, reply_id: _Optional[str] = ..., confirm_results: _Optional[_Iterable[_Union[ConfirmResult, _Mapping]]] = ...) -> None: ...

class ConfirmResult(_message.Message):
    __slots__ = ("confirmed", "tool_call", "rules", "reason")
    CONFIRMED_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    confirmed: bool
    tool_call: _content_pb2.ToolCallBlock
    rules: _containers.RepeatedCompositeFieldContainer[_permission_pb2.PermissionRule]
    reason: str
    def __init__(self, confirmed: _Optional[bool] = ..., tool_call: _Optional[_Union[_content_pb2.ToolCallBlock, _Mapping]] = ..., rules: _Optional[_Iterable[_Union[_permission_pb2.PermissionRule, _Mapping]]] = ..., reason: _Optional[str] = ...) -> None: ...

class ExternalExecutionResult(_message.Message):
    __slots__ = ("reply_id", "execution_results")
    REPLY_ID_FIELD_NUMBER: _ClassVar[int]
    EXECUTION_RESULTS_FIELD_NUMBER: _ClassVar[int]
    reply_id: str
    execution_results: _containers.RepeatedCompositeFieldContainer[_content_pb2.ToolResultBlock]
    def __init__(self, reply_id: _Optional[str] = ..., execution_results: _Optional[_Iterable[_Union[_content_pb2.ToolResultBlock, _Mapping]]] = ...) -> None: ...

class UserInterrupt(_message.Message):
    __slots__ = ("reply_id",)
    REPLY_ID_FIELD_NUMBER: _ClassVar[int]
    reply_id: str
    def __init__(self, reply_id: _Optional[str] = ...) -> None: ...

class ServerEvent(_message.Message):
    __slots__ = ("id", "seq", "session_id", "reply_id", "created_at", "replayed", "reply_start", "reply_end", "model_call_start", "model_call_end", "text_block_start", "text_block_delta", "text_block_end", "thinking_block_start", "thinking_block_delta", "thinking_block_end", "tool_call_start", "tool_call_delta", "tool_call_end", "tool_result_start", "tool_result_text_delta", "tool_result_data_delta", "tool_result_end", "require_user_confirm", "require_external_execution", "reply_parked", "custom", "error", "input_ack")
    ID_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    REPLY_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    REPLAYED_FIELD_NUMBER: _ClassVar[int]
    REPLY_START_FIELD_NUMBER: _ClassVar[int]
    REPLY_END_FIELD_NUMBER: _ClassVar[int]
    MODEL_CALL_START_FIELD_NUMBER: _ClassVar[int]
    MODEL_CALL_END_FIELD_NUMBER: _ClassVar[int]
    TEXT_BLOCK_START_FIELD_NUMBER: _ClassVar[int]
    TEXT_BLOCK_DELTA_FIELD_NUMBER: _ClassVar[int]
    TEXT_BLOCK_END_FIELD_NUMBER: _ClassVar[int]
    THINKING_BLOCK_START_FIELD_NUMBER: _ClassVar[int]
    THINKING_BLOCK_DELTA_FIELD_NUMBER: _ClassVar[int]
    THINKING_BLOCK_END_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_START_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_DELTA_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_END_FIELD_NUMBER: _ClassVar[int]
    TOOL_RESULT_START_FIELD_NUMBER: _ClassVar[int]
    TOOL_RESULT_TEXT_DELTA_FIELD_NUMBER: _ClassVar[int]
    TOOL_RESULT_DATA_DELTA_FIELD_NUMBER: _ClassVar[int]
    TOOL_RESULT_END_FIELD_NUMBER: _ClassVar[int]
    REQUIRE_USER_CONFIRM_FIELD_NUMBER: _ClassVar[int]
    REQUIRE_EXTERNAL_EXECUTION_FIELD_NUMBER: _ClassVar[int]
    REPLY_PARKED_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    INPUT_ACK_FIELD_NUMBER: _ClassVar[int]
    id: str
    seq: int
    session_id: str
    reply_id: str
    created_at: _timestamp_pb2.Timestamp
    replayed: bool
    reply_start: ReplyStart
    reply_end: ReplyEnd
    model_call_start: ModelCallStart
    model_call_end: ModelCallEnd
    text_block_start: TextBlockStart
    text_block_delta: TextBlockDelta
    text_block_end: TextBlockEnd
    thinking_block_start: ThinkingBlockStart
    thinking_block_delta: ThinkingBlockDelta
    thinking_block_end: ThinkingBlockEnd
    tool_call_start: ToolCallStart
    tool_call_delta: ToolCallDelta
    tool_call_end: ToolCallEnd
    tool_result_start: ToolResultStart
    tool_result_text_delta: ToolResultTextDelta
    tool_result_data_delta: ToolResultDataDelta
    tool_result_end: ToolResultEnd
    require_user_confirm: RequireUserConfirm
    require_external_execution: RequireExternalExecution
    reply_parked: ReplyParked
    custom: Custom
    error: _content_pb2.Failure
    input_ack: InputAck
    def __init__(self, id: _Optional[str] = ..., seq: _Optional[int] = ..., session_id: _Optional[str] = ..., reply_id: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., replayed: _Optional[bool] = ..., reply_start: _Optional[_Union[ReplyStart, _Mapping]] = ..., reply_end: _Optional[_Union[ReplyEnd, _Mapping]] = ..., model_call_start: _Optional[_Union[ModelCallStart, _Mapping]] = ..., model_call_end: _Optional[_Union[ModelCallEnd, _Mapping]] = ..., text_block_start: _Optional[_Union[TextBlockStart, _Mapping]] = ..., text_block_delta: _Optional[_Union[TextBlockDelta, _Mapping]] = ..., text_block_end: _Optional[_Union[TextBlockEnd, _Mapping]] = ..., thinking_block_start: _Optional[_Union[ThinkingBlockStart, _Mapping]] = ..., thinking_block_delta: _Optional[_Union[ThinkingBlockDelta, _Mapping]] = ..., thinking_block_end: _Optional[_Union[ThinkingBlockEnd, _Mapping]] = ..., tool_call_start: _Optional[_Union[ToolCallStart, _Mapping]] = ..., tool_call_delta: _Optional[_Union[ToolCallDelta, _Mapping]] = ..., tool_call_end: _Optional[_Union[ToolCallEnd, _Mapping]] = ..., tool_result_start: _Optional[_Union[ToolResultStart, _Mapping]] = ..., tool_result_text_delta: _Optional[_Union[ToolResultTextDelta, _Mapping]] = ..., tool_result_data_delta: _Optional[_Union[ToolResultDataDelta, _Mapping]] = ..., tool_result_end: _Optional[_Union[ToolResultEnd, _Mapping]] = ..., require_user_confirm: _Optional[_Union[RequireUserConfirm, _Mapping]] = ..., require_external_execution: _Optional[_Union[RequireExternalExecution, _Mapping]] = ..., reply_parked: _Optional[_Union[ReplyParked, _Mapping]] = ..., custom: _Optional[_Union[Custom, _Mapping]] = ..., error: _Optional[_Union[_content_pb2.Failure, _Mapping]] = ..., input_ack: _Optional[_Union[InputAck, _Mapping]] = ...) -> None: ...

class ReplyStart(_message.Message):
    __slots__ = ("name", "role")
    NAME_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    name: str
    role: _content_pb2.Role
    def __init__(self, name: _Optional[str] = ..., role: _Optional[_Union[_content_pb2.Role, str]] = ...) -> None: ...

class ReplyEnd(_message.Message):
    __slots__ = ("finished_reason", "error", "usage")
    FINISHED_REASON_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    finished_reason: _content_pb2.FinishedReason
    error: _content_pb2.Failure
    usage: _content_pb2.Usage
    def __init__(self, finished_reason: _Optional[_Union[_content_pb2.FinishedReason, str]] = ..., error: _Optional[_Union[_content_pb2.Failure, _Mapping]] = ..., usage: _Optional[_Union[_content_pb2.Usage, _Mapping]] = ...) -> None: ...

class ReplyParked(_message.Message):
    __slots__ = ("message",)
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    message: _content_pb2.Msg
    def __init__(self, message: _Optional[_Union[_content_pb2.Msg, _Mapping]] = ...) -> None: ...

class ModelCallStart(_message.Message):
    __slots__ = ("model_name",)
    MODEL_NAME_FIELD_NUMBER: _ClassVar[int]
    model_name: str
    def __init__(self, model_name: _Optional[str] = ...) -> None: ...

class ModelCallEnd(_message.Message):
    __slots__ = ("usage", "finished_reason")
    USAGE_FIELD_NUMBER: _ClassVar[int]
    FINISHED_REASON_FIELD_NUMBER: _ClassVar[int]
    usage: _content_pb2.Usage
    finished_reason: _content_pb2.FinishedReason
    def __init__(self, usage: _Optional[_Union[_content_pb2.Usage, _Mapping]] = ..., finished_reason: _Optional[_Union[_content_pb2.FinishedReason, str]] = ...) -> None: ...

class TextBlockStart(_message.Message):
    __slots__ = ("block_id",)
    BLOCK_ID_FIELD_NUMBER: _ClassVar[int]
    block_id: str
    def __init__(self, block_id: _Optional[str] = ...) -> None: ...

class TextBlockDelta(_message.Message):
    __slots__ = ("block_id", "delta")
    BLOCK_ID_FIELD_NUMBER: _ClassVar[int]
    DELTA_FIELD_NUMBER: _ClassVar[int]
    block_id: str
    delta: str
    def __init__(self, block_id: _Optional[str] = ..., delta: _Optional[str] = ...) -> None: ...

class TextBlockEnd(_message.Message):
    __slots__ = ("block_id",)
    BLOCK_ID_FIELD_NUMBER: _ClassVar[int]
    block_id: str
    def __init__(self, block_id: _Optional[str] = ...) -> None: ...

class ThinkingBlockStart(_message.Message):
    __slots__ = ("block_id",)
    BLOCK_ID_FIELD_NUMBER: _ClassVar[int]
    block_id: str
    def __init__(self, block_id: _Optional[str] = ...) -> None: ...

class ThinkingBlockDelta(_message.Message):
    __slots__ = ("block_id", "delta")
    BLOCK_ID_FIELD_NUMBER: _ClassVar[int]
    DELTA_FIELD_NUMBER: _ClassVar[int]
    block_id: str
    delta: str
    def __init__(self, block_id: _Optional[str] = ..., delta: _Optional[str] = ...) -> None: ...

class ThinkingBlockEnd(_message.Message):
    __slots__ = ("block_id",)
    BLOCK_ID_FIELD_NUMBER: _ClassVar[int]
    block_id: str
    def __init__(self, block_id: _Optional[str] = ...) -> None: ...

class ToolCallStart(_message.Message):
    __slots__ = ("tool_call_id", "tool_call_name")
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_NAME_FIELD_NUMBER: _ClassVar[int]
    tool_call_id: str
    tool_call_name: str
    def __init__(self, tool_call_id: _Optional[str] = ..., tool_call_name: _Optional[str] = ...) -> None: ...

class ToolCallDelta(_message.Message):
    __slots__ = ("tool_call_id", "delta")
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    DELTA_FIELD_NUMBER: _ClassVar[int]
    tool_call_id: str
    delta: str
    def __init__(self, tool_call_id: _Optional[str] = ..., delta: _Optional[str] = ...) -> None: ...

class ToolCallEnd(_message.Message):
    __slots__ = ("tool_call_id", "input")
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    tool_call_id: str
    input: str
    def __init__(self, tool_call_id: _Optional[str] = ..., input: _Optional[str] = ...) -> None: ...

class ToolResultStart(_message.Message):
    __slots__ = ("tool_call_id", "tool_call_name")
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_NAME_FIELD_NUMBER: _ClassVar[int]
    tool_call_id: str
    tool_call_name: str
    def __init__(self, tool_call_id: _Optional[str] = ..., tool_call_name: _Optional[str] = ...) -> None: ...

class ToolResultTextDelta(_message.Message):
    __slots__ = ("tool_call_id", "delta")
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    DELTA_FIELD_NUMBER: _ClassVar[int]
    tool_call_id: str
    delta: str
    def __init__(self, tool_call_id: _Optional[str] = ..., delta: _Optional[str] = ...) -> None: ...

class ToolResultDataDelta(_message.Message):
    __slots__ = ("tool_call_id", "media_type", "data", "url")
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    MEDIA_TYPE_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    tool_call_id: str
    media_type: str
    data: bytes
    url: str
    def __init__(self, tool_call_id: _Optional[str] = ..., media_type: _Optional[str] = ..., data: _Optional[bytes] = ..., url: _Optional[str] = ...) -> None: ...

class ToolResultEnd(_message.Message):
    __slots__ = ("tool_call_id", "state", "metadata", "ask_user")
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    ASK_USER_FIELD_NUMBER: _ClassVar[int]
    tool_call_id: str
    state: _content_pb2.ToolResultState
    metadata: _struct_pb2.Struct
    ask_user: _ask_user_pb2.AskUserMetadata
    def __init__(self, tool_call_id: _Optional[str] = ..., state: _Optional[_Union[_content_pb2.ToolResultState, str]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., ask_user: _Optional[_Union[_ask_user_pb2.AskUserMetadata, _Mapping]] = ...) -> None: ...

class RequireUserConfirm(_message.Message):
    __slots__ = ("tool_calls",)
    TOOL_CALLS_FIELD_NUMBER: _ClassVar[int]
    tool_calls: _containers.RepeatedCompositeFieldContainer[_content_pb2.ToolCallBlock]
    def __init__(self, tool_calls: _Optional[_Iterable[_Union[_content_pb2.ToolCallBlock, _Mapping]]] = ...) -> None: ...

class RequireExternalExecution(_message.Message):
    __slots__ = ("tool_calls",)
    TOOL_CALLS_FIELD_NUMBER: _ClassVar[int]
    tool_calls: _containers.RepeatedCompositeFieldContainer[_content_pb2.ToolCallBlock]
    def __init__(self, tool_calls: _Optional[_Iterable[_Union[_content_pb2.ToolCallBlock, _Mapping]]] = ...) -> None: ...

class Custom(_message.Message):
    __slots__ = ("name", "value")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    name: str
    value: _struct_pb2.Value
    def __init__(self, name: _Optional[str] = ..., value: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ...) -> None: ...

class InputAck(_message.Message):
    __slots__ = ("request_id", "status", "last_seq")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    LAST_SEQ_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    status: _status_pb2.Status
    last_seq: int
    def __init__(self, request_id: _Optional[str] = ..., status: _Optional[_Union[_status_pb2.Status, _Mapping]] = ..., last_seq: _Optional[int] = ...) -> None: ...

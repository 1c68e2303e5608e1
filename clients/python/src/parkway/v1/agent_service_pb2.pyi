import datetime

from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from parkway.v1 import content_pb2 as _content_pb2
from parkway.v1 import events_pb2 as _events_pb2
from parkway.v1 import permission_pb2 as _permission_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SessionStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SESSION_STATUS_UNSPECIFIED: _ClassVar[SessionStatus]
    SESSION_STATUS_IDLE: _ClassVar[SessionStatus]
    SESSION_STATUS_RUNNING: _ClassVar[SessionStatus]
    SESSION_STATUS_AWAITING_PERMISSION: _ClassVar[SessionStatus]
    SESSION_STATUS_AWAITING_EXTERNAL_RESULT: _ClassVar[SessionStatus]

class ExpiryPolicy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EXPIRY_POLICY_UNSPECIFIED: _ClassVar[ExpiryPolicy]
    EXPIRY_POLICY_DENY: _ClassVar[ExpiryPolicy]
    EXPIRY_POLICY_INTERRUPT: _ClassVar[ExpiryPolicy]
SESSION_STATUS_UNSPECIFIED: SessionStatus
SESSION_STATUS_IDLE: SessionStatus
SESSION_STATUS_RUNNING: SessionStatus
SESSION_STATUS_AWAITING_PERMISSION: SessionStatus
SESSION_STATUS_AWAITING_EXTERNAL_RESULT: SessionStatus
EXPIRY_POLICY_UNSPECIFIED: ExpiryPolicy
EXPIRY_POLICY_DENY: ExpiryPolicy
EXPIRY_POLICY_INTERRUPT: ExpiryPolicy

class ExternalTool(_message.Message):
    __slots__ = ("name", "description", "input_schema", "metadata_schema")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    INPUT_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    METADATA_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    input_schema: str
    metadata_schema: str
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., input_schema: _Optional[str] = ..., metadata_schema: _Optional[str] = ...) -> None: ...

class ToolInfo(_message.Message):
    __slots__ = ("name", "description", "input_schema", "external")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    INPUT_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    input_schema: str
    external: bool
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., input_schema: _Optional[str] = ..., external: _Optional[bool] = ...) -> None: ...

class Agent(_message.Message):
    __slots__ = ("id", "description", "model", "tools", "permission_mode", "working_directories", "max_iters", "confirm_timeout", "expiry_policy")
    ID_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    PERMISSION_MODE_FIELD_NUMBER: _ClassVar[int]
    WORKING_DIRECTORIES_FIELD_NUMBER: _ClassVar[int]
    MAX_ITERS_FIELD_NUMBER: _ClassVar[int]
    CONFIRM_TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    EXPIRY_POLICY_FIELD_NUMBER: _ClassVar[int]
    id: str
    description: str
    model: str
    tools: _containers.RepeatedCompositeFieldContainer[ToolInfo]
    permission_mode: _permission_pb2.PermissionMode
    working_directories: _containers.RepeatedScalarFieldContainer[str]
    max_iters: int
    confirm_timeout: _duration_pb2.Duration
    expiry_policy: ExpiryPolicy
    def __init__(self, id: _Optional[str] = ..., description: _Optional[str] = ..., model: _Optional[str] = ..., tools: _Optional[_Iterable[_Union[ToolInfo, _Mapping]]] = ..., permission_mode: _Optional[_Union[_permission_pb2.PermissionMode, str]] = ..., working_directories: _Optional[_Iterable[str]] = ..., max_iters: _Optional[int] = ..., confirm_timeout: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., expiry_policy: _Optional[_Union[ExpiryPolicy, str]] = ...) -> None: ...

class Session(_message.Message):
    __slots__ = ("id", "agent_id", "status", "pending_tool_calls", "last_seq", "reply_id", "permission_mode", "working_directories", "external_tools", "created_at", "updated_at", "metadata", "usage")
    ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    PENDING_TOOL_CALLS_FIELD_NUMBER: _ClassVar[int]
    LAST_SEQ_FIELD_NUMBER: _ClassVar[int]
    REPLY_ID_FIELD_NUMBER: _ClassVar[int]
    PERMISSION_MODE_FIELD_NUMBER: _ClassVar[int]
    WORKING_DIRECTORIES_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_TOOLS_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    id: str
    agent_id: str
    status: SessionStatus
    pending_tool_calls: _containers.RepeatedCompositeFieldContainer[_content_pb2.ToolCallBlock]
    last_seq: int
    reply_id: str
    permission_mode: _permission_pb2.PermissionMode
    working_directories: _containers.RepeatedScalarFieldContainer[str]
    external_tools: _containers.RepeatedCompositeFieldContainer[ExternalTool]
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    metadata: _struct_pb2.Struct
    usage: _content_pb2.Usage
    def __init__(self, id: _Optional[str] = ..., agent_id: _Optional[str] = ..., status: _Optional[_Union[SessionStatus, str]] = ..., pending_tool_calls: _Optional[_Iterable[_Union[_content_pb2.ToolCallBlock, _Mapping]]] = ..., last_seq: _Optional[int] = ..., reply_id: _Optional[str] = ..., permission_mode: _Optional[_Union[_permission_pb2.PermissionMode, str]] = ..., working_directories: _Optional[_Iterable[str]] = ..., external_tools: _Optional[_Iterable[_Union[ExternalTool, _Mapping]]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., usage: _Optional[_Union[_content_pb2.Usage, _Mapping]] = ...) -> None: ...

class ReplyRequest(_message.Message):
    __slots__ = ("session_id", "request_id", "user_message", "user_confirm_result", "external_execution_result", "user_interrupt")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    USER_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    USER_CONFIRM_RESULT_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_EXECUTION_RESULT_FIELD_NUMBER: _ClassVar[int]
    USER_INTERRUPT_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    request_id: str
    user_message: _events_pb2.UserMessage
    user_confirm_result: _events_pb2.UserConfirmResult
    external_execution_result: _events_pb2.ExternalExecutionResult
    user_interrupt: _events_pb2.UserInterrupt
    def __init__(self, session_id: _Optional[str] = ..., request_id: _Optional[str] = ..., user_message: _Optional[_Union[_events_pb2.UserMessage, _Mapping]] = ..., user_confirm_result: _Optional[_Union[_events_pb2.UserConfirmResult, _Mapping]] = ..., external_execution_result: _Optional[_Union[_events_pb2.ExternalExecutionResult, _Mapping]] = ..., user_interrupt: _Optional[_Union[_events_pb2.UserInterrupt, _Mapping]] = ...) -> None: ...

class ReplyResponse(_message.Message):
    __slots__ = ("message", "pending_tool_calls", "status")
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    PENDING_TOOL_CALLS_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    message: _content_pb2.Msg
    pending_tool_calls: _containers.RepeatedCompositeFieldContainer[_content_pb2.ToolCallBlock]
    status: SessionStatus
    def __init__(self, message: _Optional[_Union[_content_pb2.Msg, _Mapping]] = ..., pending_tool_calls: _Optional[_Iterable[_Union[_content_pb2.ToolCallBlock, _Mapping]]] = ..., status: _Optional[_Union[SessionStatus, str]] = ...) -> None: ...

class WatchRequest(_message.Message):
    __slots__ = ("session_id", "after_seq")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    AFTER_SEQ_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    after_seq: int
    def __init__(self, session_id: _Optional[str] = ..., after_seq: _Optional[int] = ...) -> None: ...

class SendRequest(_message.Message):
    __slots__ = ("session_id", "request_id", "user_message", "user_confirm_result", "external_execution_result", "user_interrupt")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    USER_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    USER_CONFIRM_RESULT_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_EXECUTION_RESULT_FIELD_NUMBER: _ClassVar[int]
    USER_INTERRUPT_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    request_id: str
    user_message: _events_pb2.UserMessage
    user_confirm_result: _events_pb2.UserConfirmResult
    external_execution_result: _events_pb2.ExternalExecutionResult
    user_interrupt: _events_pb2.UserInterrupt
    def __init__(self, session_id: _Optional[str] = ..., request_id: _Optional[str] = ..., user_message: _Optional[_Union[_events_pb2.UserMessage, _Mapping]] = ..., user_confirm_result: _Optional[_Union[_events_pb2.UserConfirmResult, _Mapping]] = ..., external_execution_result: _Optional[_Union[_events_pb2.ExternalExecutionResult, _Mapping]] = ..., user_interrupt: _Optional[_Union[_events_pb2.UserInterrupt, _Mapping]] = ...) -> None: ...

class SendResponse(_message.Message):
    __slots__ = ("request_id", "reply_id")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    REPLY_ID_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    reply_id: str
    def __init__(self, request_id: _Optional[str] = ..., reply_id: _Optional[str] = ...) -> None: ...

class ListMessagesRequest(_message.Message):
    __slots__ = ("session_id", "page_size", "page_token")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    page_size: int
    page_token: str
    def __init__(self, session_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListMessagesResponse(_message.Message):
    __slots__ = ("messages", "next_page_token")
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[_content_pb2.Msg]
    next_page_token: str
    def __init__(self, messages: _Optional[_Iterable[_Union[_content_pb2.Msg, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class CreateSessionRequest(_message.Message):
    __slots__ = ("agent_id", "external_tools", "permission_mode", "working_directories", "metadata")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_TOOLS_FIELD_NUMBER: _ClassVar[int]
    PERMISSION_MODE_FIELD_NUMBER: _ClassVar[int]
    WORKING_DIRECTORIES_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    external_tools: _containers.RepeatedCompositeFieldContainer[ExternalTool]
    permission_mode: _permission_pb2.PermissionMode
    working_directories: _containers.RepeatedScalarFieldContainer[str]
    metadata: _struct_pb2.Struct
    def __init__(self, agent_id: _Optional[str] = ..., external_tools: _Optional[_Iterable[_Union[ExternalTool, _Mapping]]] = ..., permission_mode: _Optional[_Union[_permission_pb2.PermissionMode, str]] = ..., working_directories: _Optional[_Iterable[str]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class CreateSessionResponse(_message.Message):
    __slots__ = ("session",)
    SESSION_FIELD_NUMBER: _ClassVar[int]
    session: Session
    def __init__(self, session: _Optional[_Union[Session, _Mapping]] = ...) -> None: ...

class GetSessionRequest(_message.Message):
    __slots__ = ("session_id",)
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    def __init__(self, session_id: _Optional[str] = ...) -> None: ...

class GetSessionResponse(_message.Message):
    __slots__ = ("session",)
    SESSION_FIELD_NUMBER: _ClassVar[int]
    session: Session
    def __init__(self, session: _Optional[_Union[Session, _Mapping]] = ...) -> None: ...

class ListSessionsRequest(_message.Message):
    __slots__ = ("status", "agent_id", "page_size", "page_token")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    status: SessionStatus
    agent_id: str
    page_size: int
    page_token: str
    def __init__(self, status: _Optional[_Union[SessionStatus, str]] = ..., agent_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListSessionsResponse(_message.Message):
    __slots__ = ("sessions", "next_page_token")
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    sessions: _containers.RepeatedCompositeFieldContainer[Session]
    next_page_token: str
    def __init__(self, sessions: _Optional[_Iterable[_Union[Session, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class DeleteSessionRequest(_message.Message):
    __slots__ = ("session_id",)
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    def __init__(self, session_id: _Optional[str] = ...) -> None: ...

class DeleteSessionResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListAgentsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListAgentsResponse(_message.Message):
    __slots__ = ("agents",)
    AGENTS_FIELD_NUMBER: _ClassVar[int]
    agents: _containers.RepeatedCompositeFieldContainer[Agent]
    def __init__(self, agents: _Optional[_Iterable[_Union[Agent, _Mapping]]] = ...) -> None: ...

from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class AskUserInput(_message.Message):
    __slots__ = ("questions", "message")
    QUESTIONS_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    questions: _containers.RepeatedCompositeFieldContainer[AskUserQuestion]
    message: str
    def __init__(self, questions: _Optional[_Iterable[_Union[AskUserQuestion, _Mapping]]] = ..., message: _Optional[str] = ...) -> None: ...

class AskUserQuestion(_message.Message):
    __slots__ = ("question", "header", "context", "options", "multi_select", "may_skip", "answer_format")
    QUESTION_FIELD_NUMBER: _ClassVar[int]
    HEADER_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    MULTI_SELECT_FIELD_NUMBER: _ClassVar[int]
    MAY_SKIP_FIELD_NUMBER: _ClassVar[int]
    ANSWER_FORMAT_FIELD_NUMBER: _ClassVar[int]
    question: str
    header: str
    context: str
    options: _containers.RepeatedCompositeFieldContainer[AskUserOption]
    multi_select: bool
    may_skip: bool
    answer_format: str
    def __init__(self, question: _Optional[str] = ..., header: _Optional[str] = ..., context: _Optional[str] = ..., options: _Optional[_Iterable[_Union[AskUserOption, _Mapping]]] = ..., multi_select: _Optional[bool] = ..., may_skip: _Optional[bool] = ..., answer_format: _Optional[str] = ...) -> None: ...

class AskUserOption(_message.Message):
    __slots__ = ("label", "description", "preview")
    LABEL_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    PREVIEW_FIELD_NUMBER: _ClassVar[int]
    label: str
    description: str
    preview: str
    def __init__(self, label: _Optional[str] = ..., description: _Optional[str] = ..., preview: _Optional[str] = ...) -> None: ...

class AskUserMetadata(_message.Message):
    __slots__ = ("answers",)
    ANSWERS_FIELD_NUMBER: _ClassVar[int]
    answers: _containers.RepeatedCompositeFieldContainer[AskUserAnswer]
    def __init__(self, answers: _Optional[_Iterable[_Union[AskUserAnswer, _Mapping]]] = ...) -> None: ...

class AskUserAnswer(_message.Message):
    __slots__ = ("question", "selected", "other")
    QUESTION_FIELD_NUMBER: _ClassVar[int]
    SELECTED_FIELD_NUMBER: _ClassVar[int]
    OTHER_FIELD_NUMBER: _ClassVar[int]
    question: str
    selected: _containers.RepeatedScalarFieldContainer[str]
    other: str
    def __init__(self, question: _Optional[str] = ..., selected: _Optional[_Iterable[str]] = ..., other: _Optional[str] = ...) -> None: ...

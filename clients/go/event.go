package parkway

import (
	"google.golang.org/protobuf/reflect/protoreflect"

	pb "github.com/parkway-dev/parkway/clients/go/gen/parkway/v1"
)

// Kind names what a ServerEvent is: the name of its `event` oneof field, e.g. "reply_start" or
// "tool_result_end", as the scenario files and the proto spell them.
type Kind string

// The kinds of ServerEvent (input_ack never reaches a Session's consumer).
const (
	KindUnknown                  Kind = ""
	KindReplyStart               Kind = "reply_start"
	KindReplyEnd                 Kind = "reply_end"
	KindModelCallStart           Kind = "model_call_start"
	KindModelCallEnd             Kind = "model_call_end"
	KindTextBlockStart           Kind = "text_block_start"
	KindTextBlockDelta           Kind = "text_block_delta"
	KindTextBlockEnd             Kind = "text_block_end"
	KindThinkingBlockStart       Kind = "thinking_block_start"
	KindThinkingBlockDelta       Kind = "thinking_block_delta"
	KindThinkingBlockEnd         Kind = "thinking_block_end"
	KindToolCallStart            Kind = "tool_call_start"
	KindToolCallDelta            Kind = "tool_call_delta"
	KindToolCallEnd              Kind = "tool_call_end"
	KindToolResultStart          Kind = "tool_result_start"
	KindToolResultTextDelta      Kind = "tool_result_text_delta"
	KindToolResultDataDelta      Kind = "tool_result_data_delta"
	KindToolResultEnd            Kind = "tool_result_end"
	KindRequireUserConfirm       Kind = "require_user_confirm"
	KindRequireExternalExecution Kind = "require_external_execution"
	KindReplyParked              Kind = "reply_parked"
	KindCustom                   Kind = "custom"
	KindError                    Kind = "error"
	KindInputAck                 Kind = "input_ack"
)

// Event is one event of a session. The generated *pb.ServerEvent is embedded, so its getters
// (GetSeq, GetReplyId, GetReplayed, GetTextBlockDelta, GetReplyEnd, …) are available directly.
type Event struct {
	*pb.ServerEvent
	kind Kind // set when the client made the event; else Kind reads it from the message
}

var eventOneof = (&pb.ServerEvent{}).ProtoReflect().Descriptor().Oneofs().ByName("event")

// Kind returns the event's kind, or KindUnknown for an event this client does not know.
func (e *Event) Kind() Kind {
	if e == nil || e.ServerEvent == nil {
		return KindUnknown
	}
	if e.kind != KindUnknown {
		return e.kind
	}
	return kindOf(e.ServerEvent)
}

func kindOf(ev *pb.ServerEvent) Kind {
	fd := ev.ProtoReflect().WhichOneof(eventOneof)
	if fd == nil {
		return KindUnknown
	}
	return Kind(fd.Name())
}

// Settles reports whether the event ends a reply's stretch of events: REPLY_END (the reply
// finished) or REPLY_PARKED (it waits for answers).
func (e *Event) Settles() bool {
	k := e.Kind()
	return k == KindReplyEnd || k == KindReplyParked
}

// ToolCalls returns the tool calls of a REQUIRE_USER_CONFIRM or REQUIRE_EXTERNAL_EXECUTION event, or
// nil for any other event.
func (e *Event) ToolCalls() []*ToolCall {
	switch e.Kind() {
	case KindRequireUserConfirm:
		return e.GetRequireUserConfirm().GetToolCalls()
	case KindRequireExternalExecution:
		return e.GetRequireExternalExecution().GetToolCalls()
	}
	return nil
}

// ToolCallID returns the id of the tool call that a TOOL_CALL_* or TOOL_RESULT_* event is about, or
// "" for any other event.
func (e *Event) ToolCallID() string {
	if e == nil || e.ServerEvent == nil {
		return ""
	}
	fd := e.ProtoReflect().WhichOneof(eventOneof)
	if fd == nil || fd.Kind() != protoreflect.MessageKind {
		return ""
	}
	msg := e.ProtoReflect().Get(fd).Message()
	id := msg.Descriptor().Fields().ByName("tool_call_id")
	if id == nil {
		return ""
	}
	return msg.Get(id).String()
}

// Delta returns the text a delta event appends (text, thinking, tool call input, tool result text),
// or "" for any other event.
func (e *Event) Delta() string {
	switch e.Kind() {
	case KindTextBlockDelta:
		return e.GetTextBlockDelta().GetDelta()
	case KindThinkingBlockDelta:
		return e.GetThinkingBlockDelta().GetDelta()
	case KindToolCallDelta:
		return e.GetToolCallDelta().GetDelta()
	case KindToolResultTextDelta:
		return e.GetToolResultTextDelta().GetDelta()
	}
	return ""
}

// isRequire reports whether kind announces tool calls that wait for the client.
func isRequire(kind Kind) bool {
	return kind == KindRequireUserConfirm || kind == KindRequireExternalExecution
}

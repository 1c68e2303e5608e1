package parkway

import (
	"context"
	"errors"
	"fmt"
	"io"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	pb "github.com/parkway-dev/parkway/clients/go/gen/parkway/v1"
)

// pendingInput is an input waiting for its acknowledgement.
type pendingInput struct {
	ev    *pb.ClientEvent
	done  chan error // receives the outcome once
	order uint64
}

// SendEvent sends one raw input (user_message, user_confirm_result, external_execution_result or
// user_interrupt) and waits for the server's acknowledgement: nil when applied, the refusal as a
// gRPC status error otherwise. Empty session_id and request_id are filled in; ev is not modified.
// While the session is reconnecting the input waits for the new stream; an input whose
// acknowledgement was lost with a broken stream is sent again, with the same request_id, on the next
// one (the server applies a request_id once). If the session fails meanwhile, SendEvent returns its
// error and the input may or may not have been applied; likewise when ctx ends first, even while
// the input is still being written (a server that stopped reading). A ctx already done sends
// nothing.
func (s *Session) SendEvent(ctx context.Context, ev *pb.ClientEvent) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if ev.GetAttach() != nil {
		return status.Error(codes.InvalidArgument, "parkway: attach is sent by Attach and Reconnect, not SendEvent")
	}
	ev = proto.Clone(ev).(*pb.ClientEvent)
	if ev.RequestId == "" {
		ev.RequestId = newRequestID()
	}
	if ev.SessionId == "" {
		ev.SessionId = s.id
	}
	p := &pendingInput{ev: ev, done: make(chan error, 1)}
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return ErrSessionClosed
	case s.err != nil:
		err := s.err
		s.mu.Unlock()
		return err
	case s.pending[ev.RequestId] != nil:
		s.mu.Unlock()
		return status.Errorf(codes.InvalidArgument, "parkway: an input with request_id %q is already waiting for its acknowledgement", ev.RequestId)
	}
	s.inputs++
	p.order = s.inputs
	s.pending[ev.RequestId] = p
	stream := s.stream // nil while reconnecting: install sends the input on the next stream
	s.mu.Unlock()
	if stream != nil {
		// Sending blocks while the stream's flow-control window is full (a server that stopped
		// reading); waiting on its own goroutine keeps ctx in charge. The send ends with the stream.
		go s.write(stream, ev)
	}
	select {
	case err := <-p.done:
		return err
	case <-ctx.Done():
		s.forget(ev.RequestId)
		return ctx.Err()
	}
}

// forget stops waiting for an input's acknowledgement; it will not be resent.
func (s *Session) forget(requestID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pending, requestID)
}

// write sends ev on stream. A broken stream (io.EOF) is left to the run loop, which attaches again
// and resends; any other error cannot be retried and becomes the input's outcome. Once Close has
// half-closed the stream nothing is sent: the input stays pending, and fails with ErrSessionClosed
// when the session ends.
func (s *Session) write(stream pb.AgentService_ChatClient, ev *pb.ClientEvent) {
	s.sendMu.Lock()
	if s.sendClosed {
		s.sendMu.Unlock()
		return
	}
	err := stream.Send(ev)
	s.sendMu.Unlock()
	if err != nil && !errors.Is(err, io.EOF) {
		s.resolve(ev.GetRequestId(), err)
	}
}

// resolve hands an input its outcome, once.
func (s *Session) resolve(requestID string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resolveLocked(requestID, err)
}

func (s *Session) resolveLocked(requestID string, err error) {
	if p, ok := s.pending[requestID]; ok {
		delete(s.pending, requestID)
		p.done <- err
	}
}

// replyID returns the reply a delivered tool call belongs to ("" when unknown: the server then
// takes the session's current reply).
func (s *Session) replyID(callID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.replyOf[callID]
}

// ConfirmOption configures [Session.Confirm].
type ConfirmOption func(*confirmConfig)

type confirmConfig struct {
	suggested bool
	rules     []*Rule
	scope     pb.RuleScope
	input     *string
}

// WithSuggestedRules accepts the call's suggested rules with the confirmation, so similar calls are
// allowed without asking (in the session, unless [WithScope] widens them).
func WithSuggestedRules() ConfirmOption {
	return func(c *confirmConfig) { c.suggested = true }
}

// WithRules accepts these rules with the confirmation. A rule without a behavior allows; without a
// scope it applies to the session.
func WithRules(rules ...*Rule) ConfirmOption {
	return func(c *confirmConfig) { c.rules = append(c.rules, rules...) }
}

// WithScope sets the scope of every rule accepted with the confirmation (RULE_SCOPE_SESSION,
// RULE_SCOPE_AGENT or RULE_SCOPE_TENANT).
func WithScope(scope pb.RuleScope) ConfirmOption {
	return func(c *confirmConfig) { c.scope = scope }
}

// WithEditedInput runs the call with this input (a JSON object encoded as a string) instead of the
// model's; the server validates it against the tool's schema and its deny rules.
func WithEditedInput(json string) ConfirmOption {
	return func(c *confirmConfig) { c.input = &json }
}

// Confirm allows a call announced by REQUIRE_USER_CONFIRM and waits for the server's
// acknowledgement (see [Session.SendEvent] for the errors).
func (s *Session) Confirm(ctx context.Context, call *ToolCall, opts ...ConfirmOption) error {
	cfg := confirmConfig{}
	for _, opt := range opts {
		opt(&cfg)
	}
	var rules []*Rule
	if cfg.suggested {
		for _, r := range call.GetSuggestedRules() {
			rules = append(rules, proto.Clone(r).(*Rule))
		}
	}
	for _, r := range cfg.rules {
		rules = append(rules, proto.Clone(r).(*Rule))
	}
	for _, r := range rules {
		if r.Behavior == pb.PermissionBehavior_PERMISSION_BEHAVIOR_UNSPECIFIED {
			r.Behavior = pb.PermissionBehavior_PERMISSION_BEHAVIOR_ALLOW
		}
		if cfg.scope != pb.RuleScope_RULE_SCOPE_UNSPECIFIED {
			r.Scope = cfg.scope
		}
	}
	answer := &pb.ToolCallBlock{Id: call.GetId(), Name: call.GetName()}
	if cfg.input != nil {
		answer.Input = *cfg.input
	}
	return s.confirm(ctx, call.GetId(), &pb.ConfirmResult{Confirmed: true, ToolCall: answer, Rules: rules})
}

// Deny refuses a call announced by REQUIRE_USER_CONFIRM; the model sees reason.
func (s *Session) Deny(ctx context.Context, call *ToolCall, reason string) error {
	answer := &pb.ToolCallBlock{Id: call.GetId(), Name: call.GetName()}
	return s.confirm(ctx, call.GetId(), &pb.ConfirmResult{Confirmed: false, ToolCall: answer, Reason: reason})
}

func (s *Session) confirm(ctx context.Context, callID string, result *pb.ConfirmResult) error {
	return s.SendEvent(ctx, &pb.ClientEvent{Event: &pb.ClientEvent_UserConfirmResult{
		UserConfirmResult: &pb.UserConfirmResult{
			ReplyId:        s.replyID(callID),
			ConfirmResults: []*pb.ConfirmResult{result},
		},
	}})
}

// Result is the outcome of a call this client executed (REQUIRE_EXTERNAL_EXECUTION).
type Result struct {
	// Output is the text the model reads.
	Output string
	// State is the outcome; the zero value means TOOL_RESULT_STATE_SUCCESS.
	State pb.ToolResultState
	// Metadata is structured data for programs (checked against the tool's metadata_schema); its
	// values must be representable in a google.protobuf.Struct.
	Metadata map[string]any
}

// SubmitResult sends the result of a call announced by REQUIRE_EXTERNAL_EXECUTION.
func (s *Session) SubmitResult(ctx context.Context, call *ToolCall, result Result) error {
	block := &pb.ToolResultBlock{Id: call.GetId(), Name: call.GetName(), State: result.State}
	if block.State == pb.ToolResultState_TOOL_RESULT_STATE_UNSPECIFIED {
		block.State = pb.ToolResultState_TOOL_RESULT_STATE_SUCCESS
	}
	if result.Output != "" {
		block.Output = []*pb.ToolOutputBlock{{Block: &pb.ToolOutputBlock_Text{Text: &pb.TextBlock{Text: result.Output}}}}
	}
	if result.Metadata != nil {
		md, err := structpb.NewStruct(result.Metadata)
		if err != nil {
			return fmt.Errorf("parkway: the result's metadata: %w", err)
		}
		block.Metadata = md
	}
	return s.submit(ctx, block)
}

// Answer answers an AskUser call (announced by REQUIRE_EXTERNAL_EXECUTION) with one answer per
// question; see [Selected]. An answer naming an unknown option is refused with INVALID_ARGUMENT whose
// field violation names it, e.g.
// external_execution_result.execution_results[0].ask_user.answers[0].selected[0].
func (s *Session) Answer(ctx context.Context, askUser *ToolCall, answers ...*AskUserAnswer) error {
	return s.submit(ctx, &pb.ToolResultBlock{
		Id:      askUser.GetId(),
		Name:    askUser.GetName(),
		State:   pb.ToolResultState_TOOL_RESULT_STATE_SUCCESS,
		AskUser: &pb.AskUserMetadata{Answers: answers},
	})
}

// Selected is the answer to question choosing the options with these labels.
func Selected(question string, labels ...string) *AskUserAnswer {
	return &AskUserAnswer{Question: question, Selected: labels}
}

func (s *Session) submit(ctx context.Context, block *pb.ToolResultBlock) error {
	return s.SendEvent(ctx, &pb.ClientEvent{Event: &pb.ClientEvent_ExternalExecutionResult{
		ExternalExecutionResult: &pb.ExternalExecutionResult{
			ReplyId:          s.replyID(block.GetId()),
			ExecutionResults: []*pb.ToolResultBlock{block},
		},
	}})
}

// Interrupt stops the session's running or parked reply (a no-op when it is idle).
func (s *Session) Interrupt(ctx context.Context) error {
	return s.SendEvent(ctx, &pb.ClientEvent{Event: &pb.ClientEvent_UserInterrupt{UserInterrupt: &pb.UserInterrupt{}}})
}

package parkway

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	pb "github.com/parkway-dev/parkway/clients/go/gen/parkway/v1"
)

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
// field violation names it, e.g. execution_results[0].ask_user.answers[0].selected[0].
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

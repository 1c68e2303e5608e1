package parkway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/code"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	parkway "github.com/parkway-dev/parkway/clients/go"
	pb "github.com/parkway-dev/parkway/clients/go/gen/parkway/v1"
	"github.com/parkway-dev/parkway/clients/go/internal/testserver"
)

const (
	// scenarioTimeout bounds one whole scenario.
	scenarioTimeout = 90 * time.Second
	// settleTimeout bounds the wait for the events of one step, as the TypeScript runner does.
	settleTimeout = 20 * time.Second
)

// scenarioEnv is the server, scripted model and client that every scenario shares.
type scenarioEnv struct {
	model  *testserver.MockModel
	server *testserver.Server
	client *parkway.Client
	// cluster, when set, spreads every scenario over several nodes on one database (see
	// scenario_cluster_test.go); server is then nil and client is the first node's.
	cluster *clusterEnv
}

// TestScenarios runs every scenario file against one real server and scripted model, one subtest
// per file, in order. Each scenario gets an agent of its own (id = file stem) with its own working
// directory, configured from the file's "agent".
func TestScenarios(t *testing.T) {
	t.Parallel()
	loaded, agents := loadScenarios(t)
	model := testserver.StartMockModel(t)
	server := testserver.StartServer(t, testserver.ServerOptions{ModelURL: model.URL, Agents: agents})
	// The address function follows the server across restarts, which may move it to another port.
	client, err := parkway.NewClient(server.Addr(),
		parkway.WithTimeout(rpcTimeout),
		parkway.WithAddressFunc(func(context.Context) (string, error) { return server.Addr(), nil }))
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	t.Cleanup(func() { _ = client.Close() })
	playScenarios(t, &scenarioEnv{model: model, server: server, client: client}, loaded)
}

// playScenarios runs each scenario in env as a subtest, in order.
func playScenarios(t *testing.T, env *scenarioEnv, loaded []loadedScenario) {
	for _, ls := range loaded {
		t.Run(ls.stem, func(t *testing.T) {
			if ls.err != nil {
				t.Fatalf("loading the scenario: %v", ls.err)
			}
			timeout := scenarioTimeout
			if env.cluster != nil {
				timeout = clusterScenarioTimeout
			}
			ctx, cancel := context.WithTimeout(t.Context(), timeout)
			defer cancel()
			r := &scenarioRunner{t: t, env: env, ls: ls, suggested: map[string][]*pb.PermissionRule{},
				aliases: newCallAliases()}
			r.run(ctx)
		})
	}
}

// scenarioRunner plays one scenario's steps, as test/integration/scenarios.test.ts does.
type scenarioRunner struct {
	t         *testing.T
	env       *scenarioEnv
	ls        loadedScenario
	sess      *parkway.Session
	sessionID string
	// suggested holds each announced call's suggested rules, for "rules": "suggested".
	suggested map[string][]*pb.PermissionRule
	// aliases binds the scenario's names for calls to the server's ids.
	aliases *callAliases
	// spread is a cluster run's state (see scenario_cluster_test.go); nil on one server.
	spread *spreadState
}

func (r *scenarioRunner) run(ctx context.Context) {
	t, sc := r.t, r.ls.sc
	for name, content := range sc.Files {
		if err := os.WriteFile(filepath.Join(r.ls.workdir, name), []byte(content), 0o644); err != nil {
			t.Fatalf("creating %s: %v", name, err)
		}
	}
	if err := r.env.model.Reset(ctx, sc.Script); err != nil {
		t.Fatalf("loading the script: %v", err)
	}
	r.open(ctx)
	defer r.quiesce()

	for i, st := range sc.Steps {
		label := fmt.Sprintf("%s: step %d", sc.Name, i+1)
		if r.spread != nil {
			r.moveStream(ctx, i)
		}
		if st.Error != nil {
			r.expectRefusal(ctx, label, st)
			continue
		}
		if err := r.act(ctx, st); err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		if st.Expect != nil {
			events := r.settle(ctx, label)
			r.remember(events)
			if got := shapeAgainst(events, st.Expect, r.aliases); !slices.Equal(got, st.Expect) {
				t.Fatalf("%s: events\n got: %s\nwant: %s%s", label, strings.Join(got, ", "), strings.Join(st.Expect, ", "),
					replyEndNote(events))
			}
		}
	}
	r.checkFinal(ctx)
	if r.spread != nil {
		r.checkWatchers(ctx)
	}
}

// quiesce closes the stream and, when the scenario left its session busy (it failed half-way),
// interrupts the reply so that it cannot take the next scenario's model turns.
func (r *scenarioRunner) quiesce() {
	_ = r.sess.Close()
	r.stopWatchers()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.t.Context()), settleTimeout)
	defer cancel()
	for {
		info, err := r.env.client.GetSession(ctx, r.sessionID)
		if err != nil || info.GetStatus() == pb.SessionStatus_SESSION_STATUS_IDLE {
			return
		}
		_, _ = r.env.client.Reply(ctx, &pb.ReplyRequest{
			SessionId: r.sessionID,
			Input:     &pb.ReplyRequest_UserInterrupt{UserInterrupt: &pb.UserInterrupt{}},
		})
		select {
		case <-ctx.Done():
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// open creates a session of the scenario's agent and attaches to it.
func (r *scenarioRunner) open(ctx context.Context) {
	info, err := r.env.client.CreateSession(ctx, r.ls.stem)
	if err != nil {
		r.t.Fatalf("CreateSession(%s): %v", r.ls.stem, err)
	}
	r.sessionID = info.GetId()
	if r.env.cluster != nil {
		r.attachOnNode(ctx)
		return
	}
	r.sess, err = r.env.client.Attach(ctx, r.sessionID)
	if err != nil {
		r.t.Fatalf("Attach(%s): %v", r.sessionID, err)
	}
}

// act performs a step's action; the error is the server's refusal of the input, if any.
func (r *scenarioRunner) act(ctx context.Context, st step) error {
	switch {
	case st.Send != nil:
		return r.sess.SendEvent(ctx, &pb.ClientEvent{Event: &pb.ClientEvent_UserMessage{
			UserMessage: &pb.UserMessage{Text: *st.Send},
		}})
	case st.Confirm != nil:
		return r.sess.SendEvent(ctx, &pb.ClientEvent{Event: &pb.ClientEvent_UserConfirmResult{
			UserConfirmResult: r.confirmInput(st),
		}})
	case st.Results != nil:
		return r.sess.SendEvent(ctx, &pb.ClientEvent{Event: &pb.ClientEvent_ExternalExecutionResult{
			ExternalExecutionResult: r.resultsInput(st),
		}})
	case st.Interrupt:
		return r.sess.Interrupt(ctx)
	case st.NewSession:
		_ = r.sess.Close()
		r.open(ctx)
	case st.Reconnect:
		return r.sess.Reconnect(ctx)
	case (st.Restart || st.Crash) && r.env.cluster != nil:
		return r.restartCluster(ctx, st.Crash)
	case st.Restart:
		// The session notices the shutdown (UNAVAILABLE) and attaches again after its last seq to
		// wherever the server comes back.
		if err := r.env.server.Restart(false); err != nil {
			r.t.Fatalf("restarting the server: %v", err)
		}
		return r.sess.WaitConnected(ctx)
	case st.Crash:
		// The same after a SIGKILL: no shutdown code runs.
		r.env.server.Kill()
		if err := r.env.server.Start(false); err != nil {
			r.t.Fatalf("starting the server after the kill: %v", err)
		}
		return r.sess.WaitConnected(ctx)
	}
	return nil // wait: nothing is sent; events still come
}

func (r *scenarioRunner) confirmInput(st step) *pb.UserConfirmResult {
	out := &pb.UserConfirmResult{}
	for _, c := range st.Confirm {
		call := &pb.ToolCallBlock{Id: r.aliases.id(c.Call)}
		if len(c.Input) > 0 {
			var compact bytes.Buffer
			if err := json.Compact(&compact, c.Input); err != nil {
				r.t.Fatalf("confirm %s: input: %v", c.Call, err)
			}
			call.Input = compact.String()
		}
		out.ConfirmResults = append(out.ConfirmResults, &pb.ConfirmResult{
			Confirmed: c.Confirmed,
			ToolCall:  call,
			Rules:     r.rules(c.Call, c.Rules),
			Reason:    c.Reason,
		})
	}
	return out
}

// rules decodes a confirmation's "rules": "suggested" (the call's suggested rules) or a list.
func (r *scenarioRunner) rules(call string, raw json.RawMessage) []*pb.PermissionRule {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var word string
	if json.Unmarshal(raw, &word) == nil {
		if word != "suggested" {
			r.t.Fatalf("confirm %s: rules %q: expected \"suggested\" or a list", call, word)
		}
		return r.suggested[r.aliases.id(call)]
	}
	var list []struct {
		ToolName    string  `json:"tool_name"`
		RuleContent *string `json:"rule_content"`
		Scope       string  `json:"scope"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		r.t.Fatalf("confirm %s: rules: %v", call, err)
	}
	var out []*pb.PermissionRule
	for _, rule := range list {
		scope := rule.Scope
		if scope == "" {
			scope = "session"
		}
		out = append(out, &pb.PermissionRule{
			ToolName:    rule.ToolName,
			RuleContent: rule.RuleContent,
			Behavior:    pb.PermissionBehavior_PERMISSION_BEHAVIOR_ALLOW,
			Scope:       pb.RuleScope(r.enum(pb.RuleScope_value, "RULE_SCOPE_", scope)),
		})
	}
	return out
}

func (r *scenarioRunner) resultsInput(st step) *pb.ExternalExecutionResult {
	out := &pb.ExternalExecutionResult{}
	for _, res := range st.Results {
		state := res.State
		if state == "" {
			state = "success"
		}
		block := &pb.ToolResultBlock{
			Id:    r.aliases.id(res.Call),
			State: pb.ToolResultState(r.enum(pb.ToolResultState_value, "TOOL_RESULT_STATE_", state)),
		}
		if res.Output != "" {
			block.Output = []*pb.ToolOutputBlock{{Block: &pb.ToolOutputBlock_Text{Text: &pb.TextBlock{Text: res.Output}}}}
		}
		if len(res.Metadata) > 0 && string(res.Metadata) != "null" {
			var md map[string]any
			if err := json.Unmarshal(res.Metadata, &md); err != nil {
				r.t.Fatalf("results %s: metadata: %v", res.Call, err)
			}
			s, err := structpb.NewStruct(md)
			if err != nil {
				r.t.Fatalf("results %s: metadata: %v", res.Call, err)
			}
			block.Metadata = s
		}
		if res.Answers != nil {
			block.AskUser = &pb.AskUserMetadata{}
			for _, a := range res.Answers {
				block.AskUser.Answers = append(block.AskUser.Answers, &pb.AskUserAnswer{
					Question: a.Question, Selected: a.Selected, Other: a.Other,
				})
			}
		}
		out.ExecutionResults = append(out.ExecutionResults, block)
	}
	return out
}

// enum maps a scenario's lower-case enum word ("agent", "running") to the proto enum's number.
func (r *scenarioRunner) enum(values map[string]int32, prefix, word string) int32 {
	n, ok := values[prefix+strings.ToUpper(word)]
	if !ok {
		r.t.Fatalf("unknown %s value %q", strings.TrimSuffix(prefix, "_"), word)
	}
	return n
}

// expectRefusal runs a step that must be refused, and checks that nothing changed.
func (r *scenarioRunner) expectRefusal(ctx context.Context, label string, st step) {
	t := r.t
	before, err := r.env.client.GetSession(ctx, r.sessionID)
	if err != nil {
		t.Fatalf("%s: GetSession: %v", label, err)
	}
	err = r.act(ctx, st)
	if err == nil {
		t.Fatalf("%s: the input was applied; want a %s refusal", label, st.Error.Code)
	}
	s, ok := status.FromError(err)
	if !ok {
		t.Fatalf("%s: %v is not a gRPC status error", label, err)
	}
	if got := code.Code(s.Code()).String(); got != st.Error.Code {
		t.Errorf("%s: code %s, want %s (%s)", label, got, st.Error.Code, s.Message())
	}
	if st.Error.Field != "" {
		var fields []string
		for _, v := range parkway.FieldViolations(err) {
			fields = append(fields, v.GetField())
		}
		if !slices.Contains(fields, st.Error.Field) {
			t.Errorf("%s: field violations %q do not name %s", label, fields, st.Error.Field)
		}
	}
	if st.Error.Message != "" {
		re, rerr := regexp.Compile(r.aliases.pattern(st.Error.Message))
		if rerr != nil {
			t.Fatalf("%s: message pattern: %v", label, rerr)
		}
		if !re.MatchString(s.Message()) {
			t.Errorf("%s: message %q does not match %q", label, s.Message(), st.Error.Message)
		}
	}
	after, err := r.env.client.GetSession(ctx, r.sessionID)
	if err != nil {
		t.Fatalf("%s: GetSession: %v", label, err)
	}
	if after.GetLastSeq() != before.GetLastSeq() || after.GetStatus() != before.GetStatus() {
		t.Errorf("%s: nothing may change: last_seq %d → %d, status %s → %s", label,
			before.GetLastSeq(), after.GetLastSeq(), before.GetStatus(), after.GetStatus())
	}
	if t.Failed() {
		t.FailNow()
	}
}

// settle collects the events up to the next REPLY_END or REPLY_PARKED.
func (r *scenarioRunner) settle(ctx context.Context, label string) []*parkway.Event {
	ctx, cancel := context.WithTimeout(ctx, settleTimeout)
	defer cancel()
	var events []*parkway.Event
	for ev, err := range r.sess.UntilSettled(ctx) {
		if err != nil {
			r.t.Fatalf("%s: waiting for events: %v; got so far: %s", label, err,
				strings.Join(shapeAgainst(events, nil, r.aliases), ", "))
		}
		events = append(events, ev)
	}
	if r.spread != nil {
		events = r.consume(label, events)
	}
	return events
}

// remember keeps the suggested rules of every announced call.
func (r *scenarioRunner) remember(events []*parkway.Event) {
	for _, ev := range events {
		for _, call := range ev.ToolCalls() {
			r.suggested[call.GetId()] = call.GetSuggestedRules()
		}
	}
}

func (r *scenarioRunner) checkFinal(ctx context.Context) {
	t, final := r.t, r.ls.sc.Final
	if final == nil {
		return
	}
	if final.Status != "" {
		info, err := r.env.client.GetSession(ctx, r.sessionID)
		if err != nil {
			t.Fatalf("final: GetSession: %v", err)
		}
		if got, want := info.GetStatus().String(), "SESSION_STATUS_"+final.Status; got != want {
			t.Errorf("final: status %s, want %s", got, want)
		}
	}
	if len(final.ModelSaw) > 0 {
		requests, err := r.env.model.Requests(ctx)
		if err != nil {
			t.Fatalf("final: %v", err)
		}
		if len(requests) == 0 {
			t.Fatalf("final: the model received no request")
		}
		var last struct {
			Messages json.RawMessage `json:"messages"`
		}
		if err := json.Unmarshal(requests[len(requests)-1], &last); err != nil {
			t.Fatalf("final: the last model request: %v", err)
		}
		var messages bytes.Buffer
		_ = json.Compact(&messages, last.Messages)
		for _, text := range final.ModelSaw {
			if !strings.Contains(messages.String(), text) {
				t.Errorf("final: the last model request does not contain %q: %s", text, messages.String())
			}
		}
	}
	for name, want := range final.Files {
		got, err := os.ReadFile(filepath.Join(r.ls.workdir, name))
		if err != nil {
			t.Errorf("final: %v", err)
		} else if string(got) != want {
			t.Errorf("final: %s holds %q, want %q", name, got, want)
		}
	}
	if final.Rules != nil {
		res, err := r.env.client.PermissionService().ListRules(ctx, &pb.ListRulesRequest{SessionId: r.sessionID})
		if err != nil {
			t.Fatalf("final: ListRules: %v", err)
		}
		if got := len(res.GetRules()); got != *final.Rules {
			t.Errorf("final: the session sees %d rules, want %d", got, *final.Rules)
		}
	}
}

// replyEndNote says why the last reply among events ended, when it ended with an error (a reply the
// server cut short, a model that failed), for a failure message; "" otherwise.
func replyEndNote(events []*parkway.Event) string {
	for _, ev := range slices.Backward(events) {
		if end := ev.GetReplyEnd(); end != nil && end.GetError() != nil {
			return fmt.Sprintf("\n(reply_end %s: %s: %s)", end.GetFinishedReason(), end.GetError().GetCode(), end.GetError().GetMessage())
		}
	}
	return ""
}

// describeEvent is "tool_result_end call_1 DENIED" for an event, trimmed to detail words (kind,
// then the tool call id(s) written as their aliases, then a tool result's state).
func describeEvent(ev *parkway.Event, detail int, aliases *callAliases) string {
	parts := []string{string(ev.Kind())}
	call := ev.ToolCallID()
	if calls := ev.ToolCalls(); call == "" && len(calls) > 0 {
		ids := make([]string, len(calls))
		for i, c := range calls {
			ids[i] = c.GetId()
		}
		call = strings.Join(ids, ",")
	}
	if detail >= 2 && call != "" {
		parts = append(parts, aliases.aliasList(call))
	}
	if end := ev.GetToolResultEnd(); detail >= 3 && end != nil {
		parts = append(parts, strings.TrimPrefix(end.GetState().String(), "TOOL_RESULT_STATE_"))
	}
	return strings.Join(parts, " ")
}

// shapeAgainst describes events with as much detail as the expectation at the same position names,
// collapsing consecutive identical delta entries, as the scenarios write them; a TOOL_CALL_START
// facing "tool_call_start X" first binds X to its call id.
func shapeAgainst(events []*parkway.Event, expected []string, aliases *callAliases) []string {
	var out []string
	for _, ev := range events {
		want := ""
		if i := min(len(out), len(expected)-1); i >= 0 {
			want = expected[i]
		}
		words := strings.Split(want, " ")
		if start := ev.GetToolCallStart(); start != nil && words[0] == "tool_call_start" && len(words) > 1 {
			aliases.bind(words[1], start.GetToolCallId())
		}
		d := describeEvent(ev, max(1, len(words)), aliases)
		if strings.HasSuffix(string(ev.Kind()), "_delta") && len(out) > 0 && out[len(out)-1] == d {
			continue
		}
		out = append(out, d)
	}
	if out == nil {
		out = []string{}
	}
	return out
}

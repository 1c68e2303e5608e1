package parkway_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	parkway "github.com/parkway-dev/parkway/clients/go"
	pb "github.com/parkway-dev/parkway/clients/go/gen/parkway/v1"
)

// TestClient exercises the client's API against a real server and scripted model. The subtests
// share the model, so they run in order.
func TestClient(t *testing.T) {
	t.Parallel()
	env := startEnv(t, []map[string]any{{"id": "assistant"}, {"id": "example"}})

	t.Run("unary calls", func(t *testing.T) { testUnary(t, env) })
	t.Run("refusals are status errors", func(t *testing.T) { testRefusals(t, env) })
	t.Run("AskUser answer naming an unknown option", func(t *testing.T) { testAskUserFieldViolation(t, env) })
	t.Run("deny, confirm, submit result, interrupt", func(t *testing.T) { testInputHelpers(t, env) })
	t.Run("re-announced calls after attach", func(t *testing.T) { testReannouncements(t, env) })
	t.Run("example frontend", func(t *testing.T) { testExampleFrontend(t, env) })
}

func testUnary(t *testing.T, env *testEnv) {
	ctx := testContext(t)
	env.play(t, `{"turns": [{"text": "Hello from the unary path."}]}`)
	c := env.client

	agents, err := c.ListAgents(ctx)
	if err != nil {
		t.Fatalf("ListAgents: %v", err)
	}
	if !slices.ContainsFunc(agents, func(a *pb.Agent) bool { return a.GetId() == "assistant" }) {
		t.Fatalf("ListAgents = %v, missing assistant", agents)
	}

	created, err := c.CreateSession(ctx, "assistant")
	if err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	got, err := c.GetSession(ctx, created.GetId())
	if err != nil {
		t.Fatalf("GetSession: %v", err)
	}
	if got.GetStatus() != pb.SessionStatus_SESSION_STATUS_IDLE || got.GetAgentId() != "assistant" {
		t.Errorf("GetSession = %v, want an idle session of assistant", got)
	}

	found := false
	for s, err := range c.Sessions(ctx, pb.SessionStatus_SESSION_STATUS_IDLE, "assistant") {
		if err != nil {
			t.Fatalf("Sessions: %v", err)
		}
		found = found || s.GetId() == created.GetId()
	}
	if !found {
		t.Errorf("Sessions(IDLE, assistant) does not list %s", created.GetId())
	}
	page, err := c.ListSessions(ctx, &pb.ListSessionsRequest{AgentId: "assistant", PageSize: 1})
	if err != nil || len(page.GetSessions()) != 1 {
		t.Errorf("ListSessions(page_size 1) = %v, %v; want one session", page, err)
	}

	hello := &pb.ReplyRequest{
		SessionId: created.GetId(),
		RequestId: "go-reply-1",
		Input:     &pb.ReplyRequest_UserMessage{UserMessage: &pb.UserMessage{Text: "hello"}},
	}
	res, err := c.Reply(ctx, hello)
	if err != nil {
		t.Fatalf("Reply: %v", err)
	}
	// A retry with the same request_id gets the first outcome; another input with it is refused.
	again, err := c.Reply(ctx, hello)
	if err != nil || !proto.Equal(again, res) {
		t.Errorf("retried Reply = %v, %v; want the first outcome %v", again, err, res)
	}
	_, err = c.Reply(ctx, &pb.ReplyRequest{
		SessionId: created.GetId(),
		RequestId: "go-reply-1",
		Input:     &pb.ReplyRequest_UserMessage{UserMessage: &pb.UserMessage{Text: "something else"}},
	})
	if v := parkway.FieldViolations(err); status.Code(err) != codes.InvalidArgument ||
		len(v) != 1 || v[0].GetField() != "request_id" {
		t.Errorf("Reply reusing request_id for another input = %v, want INVALID_ARGUMENT on request_id", err)
	}
	if res.GetMessage().GetFinishedReason() != pb.FinishedReason_FINISHED_REASON_COMPLETED {
		t.Errorf("Reply finished_reason = %v, want COMPLETED", res.GetMessage().GetFinishedReason())
	}
	var said strings.Builder
	for _, block := range res.GetMessage().GetContent() {
		said.WriteString(block.GetText().GetText())
	}
	if !strings.Contains(said.String(), "Hello from the unary path.") {
		t.Errorf("Reply message = %q", said.String())
	}

	if err := c.DeleteSession(ctx, created.GetId()); err != nil {
		t.Fatalf("DeleteSession: %v", err)
	}
	_, err = c.GetSession(ctx, created.GetId())
	if status.Code(err) != codes.NotFound {
		t.Errorf("GetSession after DeleteSession: %v, want NOT_FOUND", err)
	}
}

func testRefusals(t *testing.T, env *testEnv) {
	ctx := testContext(t)
	if _, err := env.client.Attach(ctx, "no-such-session"); status.Code(err) != codes.NotFound {
		t.Errorf("Attach(unknown session) = %v, want NOT_FOUND", err)
	}

	env.play(t, `{"turns": [
		{"toolCalls": [{"id": "b1", "name": "Bash", "input": {"command": "touch refused.txt"}}]},
		{"text": "Stopped."}
	]}`)
	sess := env.attachNew(ctx, t, "assistant")
	events := collect(t, sess.Send(ctx, "make a file"))
	if last := events[len(events)-1]; last.Kind() != parkway.KindReplyParked {
		t.Fatalf("the reply did not park: %v", kinds(events))
	}

	// A second message while the reply is parked is refused, and names what is pending.
	var refusal error
	for _, err := range sess.Send(ctx, "another") {
		refusal = err
		break
	}
	if status.Code(refusal) != codes.FailedPrecondition {
		t.Fatalf("Send while parked: %v, want FAILED_PRECONDITION", refusal)
	}
	if v := parkway.PreconditionViolations(refusal); len(v) == 0 {
		t.Errorf("Send while parked: no PreconditionFailure details in %v", refusal)
	}
	pending := firstOf(events, parkway.KindRequireUserConfirm).ToolCalls()[0].GetId()
	if !strings.Contains(status.Convert(refusal).Message(), pending) {
		t.Errorf("the refusal %q does not name the pending call %s", status.Convert(refusal).Message(), pending)
	}

	// An unknown tool call id is NOT_FOUND.
	err := sess.Confirm(ctx, &parkway.ToolCall{Id: "nope"})
	if status.Code(err) != codes.NotFound {
		t.Errorf("Confirm(unknown call) = %v, want NOT_FOUND", err)
	}
	if err := sess.Interrupt(ctx); err != nil {
		t.Fatalf("Interrupt: %v", err)
	}
	collect(t, sess.UntilSettled(ctx))
}

// testAskUserFieldViolation checks that an AskUser answer naming an unknown option is refused with
// INVALID_ARGUMENT whose BadRequest field violation names the exact answer, and that the reply
// stays parked and accepts a valid answer afterwards.
func testAskUserFieldViolation(t *testing.T, env *testEnv) {
	ctx := testContext(t)
	env.play(t, `{"turns": [
		{"toolCalls": [{"id": "a1", "name": "AskUser", "input": {"questions": [{
			"question": "Which database should we use?", "header": "Database",
			"options": [{"label": "Postgres", "description": "Relational"}, {"label": "SQLite", "description": "Embedded"}]
		}]}}]},
		{"text": "Going with your choice."}
	]}`)
	sess := env.attachNew(ctx, t, "assistant")
	events := collect(t, sess.Send(ctx, "set up a database"))
	ask := firstOf(events, parkway.KindRequireExternalExecution)
	if ask == nil || len(ask.ToolCalls()) != 1 || ask.ToolCalls()[0].GetAskUser() == nil {
		t.Fatalf("no typed AskUser call announced: %v", kinds(events))
	}
	call := ask.ToolCalls()[0]
	question := call.GetAskUser().GetQuestions()[0].GetQuestion()

	err := sess.Answer(ctx, call, parkway.Selected(question, "Oracle"))
	st, ok := status.FromError(err)
	if !ok || st.Code() != codes.InvalidArgument {
		t.Fatalf("Answer(Oracle) = %v, want an INVALID_ARGUMENT status error", err)
	}
	hasBadRequest := slices.ContainsFunc(st.Details(), func(d any) bool {
		_, ok := d.(*errdetails.BadRequest)
		return ok
	})
	if !hasBadRequest {
		t.Errorf("the status details %v carry no *errdetails.BadRequest", st.Details())
	}
	const want = "external_execution_result.execution_results[0].ask_user.answers[0].selected[0]"
	var fields []string
	for _, v := range parkway.FieldViolations(err) {
		fields = append(fields, v.GetField())
	}
	if !slices.Contains(fields, want) {
		t.Errorf("FieldViolations = %q, want %s among them", fields, want)
	}

	if err := sess.Answer(ctx, call, parkway.Selected(question, "SQLite")); err != nil {
		t.Fatalf("Answer(SQLite): %v", err)
	}
	events = collect(t, sess.UntilSettled(ctx))
	end := events[len(events)-1]
	if end.Kind() != parkway.KindReplyEnd || end.GetReplyEnd().GetFinishedReason() != pb.FinishedReason_FINISHED_REASON_COMPLETED {
		t.Errorf("after a valid answer: %v, want the reply to complete", kinds(events))
	}
}

func testInputHelpers(t *testing.T, env *testEnv) {
	ctx := testContext(t)
	env.play(t, `{"turns": [
		{"match": {"lastUser": "first"}, "toolCalls": [{"id": "b1", "name": "Bash", "input": {"command": "touch denied.txt"}}]},
		{"match": {"toolName": "Bash"}, "text": "Understood, not touching it."},
		{"match": {"lastUser": "second"}, "toolCalls": [{"id": "l1", "name": "Lookup", "input": {"query": "rows"}}]},
		{"match": {"toolName": "Lookup"}, "text": "There are 3 rows."},
		{"match": {"lastUser": "third"}, "toolCalls": [{"id": "b2", "name": "Bash", "input": {"command": "touch never.txt"}}]}
	]}`)
	lookup := &pb.ExternalTool{
		Name:           "Lookup",
		Description:    "Looks up a fact in the client's database.",
		InputSchema:    `{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`,
		MetadataSchema: `{"type":"object","properties":{"rows":{"type":"integer"}},"required":["rows"]}`,
	}
	sess := env.attachNew(ctx, t, "assistant", parkway.WithExternalTools(lookup))

	// Deny: the model sees the reason.
	events := collect(t, sess.Send(ctx, "first"))
	confirm := firstOf(events, parkway.KindRequireUserConfirm)
	if confirm == nil {
		t.Fatalf("no confirmation asked: %v", kinds(events))
	}
	if err := sess.Deny(ctx, confirm.ToolCalls()[0], "not on a Friday"); err != nil {
		t.Fatalf("Deny: %v", err)
	}
	events = collect(t, sess.UntilSettled(ctx))
	if end := firstOf(events, parkway.KindToolResultEnd); end == nil || end.GetToolResultEnd().GetState() != pb.ToolResultState_TOOL_RESULT_STATE_DENIED {
		t.Errorf("after Deny: %v, want a DENIED result", kinds(events))
	}
	requests, err := env.model.Requests(ctx)
	if err != nil || len(requests) == 0 || !strings.Contains(string(requests[len(requests)-1]), "not on a Friday") {
		t.Errorf("the model did not see the deny reason (%v)", err)
	}

	// An external tool: confirm it, then submit its result with metadata.
	events = collect(t, sess.Send(ctx, "second"))
	confirm = firstOf(events, parkway.KindRequireUserConfirm)
	if confirm == nil {
		t.Fatalf("no confirmation asked for Lookup: %v", kinds(events))
	}
	if err := sess.Confirm(ctx, confirm.ToolCalls()[0]); err != nil {
		t.Fatalf("Confirm: %v", err)
	}
	events = collect(t, sess.UntilSettled(ctx))
	external := firstOf(events, parkway.KindRequireExternalExecution)
	if external == nil {
		t.Fatalf("Lookup was not handed out: %v", kinds(events))
	}
	call := external.ToolCalls()[0]
	err = sess.SubmitResult(ctx, call, parkway.Result{Output: "3 rows", Metadata: map[string]any{"rows": "many"}})
	if !slices.ContainsFunc(parkway.FieldViolations(err), func(v *errdetails.BadRequest_FieldViolation) bool {
		return v.GetField() == "external_execution_result.execution_results[0].metadata.rows"
	}) {
		t.Errorf("SubmitResult(bad metadata) = %v, want a violation of %s", err,
			"external_execution_result.execution_results[0].metadata.rows")
	}
	if err := sess.SubmitResult(ctx, call, parkway.Result{Output: "3 rows", Metadata: map[string]any{"rows": 3}}); err != nil {
		t.Fatalf("SubmitResult: %v", err)
	}
	events = collect(t, sess.UntilSettled(ctx))
	if got := text(events); got != "There are 3 rows." {
		t.Errorf("answer after the result = %q", got)
	}

	// Interrupt a parked reply.
	events = collect(t, sess.Send(ctx, "third"))
	if firstOf(events, parkway.KindRequireUserConfirm) == nil {
		t.Fatalf("no confirmation asked: %v", kinds(events))
	}
	if err := sess.Interrupt(ctx); err != nil {
		t.Fatalf("Interrupt: %v", err)
	}
	events = collect(t, sess.UntilSettled(ctx))
	end := events[len(events)-1]
	if end.GetReplyEnd().GetFinishedReason() != pb.FinishedReason_FINISHED_REASON_INTERRUPTED {
		t.Errorf("after Interrupt: %v, want REPLY_END interrupted", kinds(events))
	}
	info, err := env.client.GetSession(context.WithoutCancel(ctx), sess.ID())
	if err != nil || info.GetStatus() != pb.SessionStatus_SESSION_STATUS_IDLE {
		t.Errorf("GetSession after the interrupt = %v, %v; want IDLE", info.GetStatus(), err)
	}
}

// testReannouncements checks, against the real server, that the REQUIRE_* re-announced after an
// attach reach a consumer that has not seen them, and only such a consumer: not a session that
// re-attached (unless it asks for every re-announcement).
func testReannouncements(t *testing.T, env *testEnv) {
	ctx := testContext(t)
	env.play(t, `{"turns": [
		{"toolCalls": [{"id": "c1", "name": "Bash", "input": {"command": "touch hi.txt"}}]},
		{"text": "Done."}
	]}`)
	sess := env.attachNew(ctx, t, "assistant")
	collect(t, sess.Send(ctx, "say hi"))
	if err := sess.Reconnect(ctx); err != nil {
		t.Fatalf("Reconnect: %v", err)
	}
	if sess.Attachments() != 2 {
		t.Errorf("Attachments() = %d after Reconnect, want 2", sess.Attachments())
	}

	attach := func(opts ...parkway.AttachOption) *parkway.Session {
		s, err := env.client.Attach(ctx, sess.ID(), opts...)
		if err != nil {
			t.Fatalf("Attach: %v", err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	late := attach(parkway.WithAfterSeq(sess.LastSeq())) // saw everything logged, not the prompt
	fresh := attach()                                    // replays from the start
	all := attach(parkway.WithReannouncements())         // replays from the start, keeps repeats
	// Re-attached after its replay, a stream gets the prompt re-announced; only WithReannouncements
	// passes it on.
	replay := collect(t, all.UntilSettled(ctx))
	if err := all.Reconnect(ctx); err != nil {
		t.Fatalf("Reconnect: %v", err)
	}

	ev, err := late.Next(ctx)
	if err != nil || ev.Kind() != parkway.KindRequireUserConfirm || ev.GetSeq() != 0 || !ev.GetReplayed() {
		t.Fatalf("after attaching past the prompt: %v, %v; want the re-announced REQUIRE_USER_CONFIRM (seq 0, replayed)", ev, err)
	}
	if err := sess.Confirm(ctx, ev.ToolCalls()[0]); err != nil {
		t.Fatalf("Confirm: %v", err)
	}
	for _, tc := range []struct {
		name    string
		s       *parkway.Session
		prompts int
	}{
		{"the reconnected session", sess, 0},
		{"a session attached past the prompt", late, 0}, // its one prompt was read above
		{"a session replaying from the start", fresh, 1},
		{"a session with WithReannouncements", all, 2},
	} {
		var prompts int
		if tc.s == all {
			prompts = len(slices.DeleteFunc(replay, func(ev *parkway.Event) bool { return ev.Kind() != parkway.KindRequireUserConfirm }))
		}
		for ev, err := range tc.s.Events(ctx) {
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if ev.Kind() == parkway.KindRequireUserConfirm {
				prompts++
			}
			if ev.Kind() == parkway.KindReplyEnd {
				break
			}
		}
		if prompts != tc.prompts {
			t.Errorf("%s saw the prompt %d times, want %d", tc.name, prompts, tc.prompts)
		}
	}
}

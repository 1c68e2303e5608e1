package parkway_test

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc/status"

	parkway "github.com/parkway-dev/parkway/clients/go"
	pb "github.com/parkway-dev/parkway/clients/go/gen/parkway/v1"
)

// The Examples run against a real Parkway server whose model plays a script: exampleServer loads
// the script and returns the server's address (see example_server_test.go).

func ExampleNewClient() {
	addr := exampleServer(`{"turns": []}`) // a Parkway server, e.g. "127.0.0.1:50051"

	// NewClient does not connect; the first call does.
	client, err := parkway.NewClient(addr, parkway.WithTimeout(10*time.Second))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	agents, err := client.ListAgents(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, agent := range agents {
		fmt.Println(agent.GetId())
	}
	// Output: assistant
}

// Send a message and print the reply as it streams.
func ExampleSession_Send() {
	addr := exampleServer(`{"turns": [{"text": "Hello! What shall we build today?"}]}`)
	ctx := context.Background()

	client, err := parkway.NewClient(addr)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	info, err := client.CreateSession(ctx, "assistant")
	if err != nil {
		fmt.Println(err)
		return
	}
	sess, err := client.Attach(ctx, info.GetId())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sess.Close()

	for ev, err := range sess.Send(ctx, "hi") { // up to REPLY_END, or REPLY_PARKED
		if err != nil {
			fmt.Println(err)
			return
		}
		switch ev.Kind() {
		case parkway.KindTextBlockDelta:
			fmt.Print(ev.Delta())
		case parkway.KindTextBlockEnd:
			fmt.Println()
		case parkway.KindReplyEnd:
			fmt.Println("finished:", ev.GetReplyEnd().GetFinishedReason())
		}
	}
	// Output:
	// Hello! What shall we build today?
	// finished: FINISHED_REASON_COMPLETED
}

// A tool call that needs a person's approval parks the reply (REQUIRE_USER_CONFIRM, then
// REPLY_PARKED); confirming it resumes the reply.
func ExampleSession_Confirm() {
	addr := exampleServer(`{"turns": [
		{"toolCalls": [{"id": "c1", "name": "Bash", "input": {"command": "touch notes.txt"}}]},
		{"text": "Created notes.txt."}
	]}`)
	ctx := context.Background()

	client, err := parkway.NewClient(addr)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	info, err := client.CreateSession(ctx, "assistant")
	if err != nil {
		fmt.Println(err)
		return
	}
	sess, err := client.Attach(ctx, info.GetId())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sess.Close()

	var asked []*parkway.ToolCall
	for ev, err := range sess.Send(ctx, "make notes.txt") {
		if err != nil {
			fmt.Println(err)
			return
		}
		if ev.Kind() == parkway.KindRequireUserConfirm {
			asked = append(asked, ev.ToolCalls()...)
		}
	}
	for _, call := range asked {
		fmt.Println("approve?", call.GetName(), call.GetInput())
		for _, rule := range call.GetSuggestedRules() {
			fmt.Printf("suggested rule: %s(%s)\n", rule.GetToolName(), rule.GetRuleContent())
		}
		// Allowed, and with the suggested rules kept, similar calls no longer ask in this session.
		if err := sess.Confirm(ctx, call, parkway.WithSuggestedRules()); err != nil {
			fmt.Println(err)
			return
		}
	}
	for ev, err := range sess.UntilSettled(ctx) {
		if err != nil {
			fmt.Println(err)
			return
		}
		switch ev.Kind() {
		case parkway.KindToolResultEnd:
			fmt.Println("result:", ev.GetToolResultEnd().GetState())
		case parkway.KindTextBlockDelta:
			fmt.Print(ev.Delta())
		case parkway.KindTextBlockEnd:
			fmt.Println()
		case parkway.KindReplyEnd:
			fmt.Println("finished:", ev.GetReplyEnd().GetFinishedReason())
		}
	}
	// Output:
	// approve? Bash {"command":"touch notes.txt"}
	// suggested rule: Bash(touch notes.txt:*)
	// result: TOOL_RESULT_STATE_SUCCESS
	// Created notes.txt.
	// finished: FINISHED_REASON_COMPLETED
}

// A tool that the client runs itself is declared with the session; the model's call of it parks the
// reply (REQUIRE_EXTERNAL_EXECUTION) until the client submits the result.
func ExampleSession_SubmitResult() {
	addr := exampleServer(`{"turns": [
		{"toolCalls": [{"id": "l1", "name": "Lookup", "input": {"query": "open orders"}}]},
		{"text": "There are 3 open orders."}
	]}`)
	ctx := context.Background()

	client, err := parkway.NewClient(addr)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	lookup := &pb.ExternalTool{
		Name:        "Lookup",
		Description: "Looks up a fact in the shop's database.",
		InputSchema: `{"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}`,
	}
	info, err := client.CreateSession(ctx, "assistant", parkway.WithExternalTools(lookup))
	if err != nil {
		fmt.Println(err)
		return
	}
	sess, err := client.Attach(ctx, info.GetId())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sess.Close()

	var calls []*parkway.ToolCall
	for ev, err := range sess.Send(ctx, "how many orders are open?") {
		if err != nil {
			fmt.Println(err)
			return
		}
		if ev.Kind() == parkway.KindRequireExternalExecution {
			calls = append(calls, ev.ToolCalls()...)
		}
	}
	for _, call := range calls {
		fmt.Println("run", call.GetName(), call.GetInput())
		if err := sess.SubmitResult(ctx, call, parkway.Result{Output: "3 rows"}); err != nil {
			fmt.Println(err)
			return
		}
	}
	for ev, err := range sess.UntilSettled(ctx) {
		if err != nil {
			fmt.Println(err)
			return
		}
		switch ev.Kind() {
		case parkway.KindTextBlockDelta:
			fmt.Print(ev.Delta())
		case parkway.KindTextBlockEnd:
			fmt.Println()
		case parkway.KindReplyEnd:
			fmt.Println("finished:", ev.GetReplyEnd().GetFinishedReason())
		}
	}
	// Output:
	// run Lookup {"query":"open orders"}
	// There are 3 open orders.
	// finished: FINISHED_REASON_COMPLETED
}

// The model's AskUser call parks the reply (REQUIRE_EXTERNAL_EXECUTION, its questions typed in
// GetAskUser) until the client answers every question.
func ExampleSession_Answer() {
	addr := exampleServer(`{"turns": [
		{"toolCalls": [{"id": "a1", "name": "AskUser", "input": {"questions": [{
			"question": "Which database should we use?", "header": "Database",
			"options": [{"label": "Postgres", "description": "Relational"}, {"label": "SQLite", "description": "Embedded"}]
		}]}}]},
		{"text": "Going with Postgres."}
	]}`)
	ctx := context.Background()

	client, err := parkway.NewClient(addr)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	info, err := client.CreateSession(ctx, "assistant")
	if err != nil {
		fmt.Println(err)
		return
	}
	sess, err := client.Attach(ctx, info.GetId())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sess.Close()

	var questions []*parkway.ToolCall
	for ev, err := range sess.Send(ctx, "set up a database") {
		if err != nil {
			fmt.Println(err)
			return
		}
		for _, call := range ev.ToolCalls() {
			if ev.Kind() == parkway.KindRequireExternalExecution && call.GetAskUser() != nil {
				questions = append(questions, call)
			}
		}
	}
	for _, call := range questions {
		var answers []*parkway.AskUserAnswer
		for _, q := range call.GetAskUser().GetQuestions() {
			fmt.Println(q.GetQuestion())
			for _, option := range q.GetOptions() {
				fmt.Printf("- %s: %s\n", option.GetLabel(), option.GetDescription())
			}
			answers = append(answers, parkway.Selected(q.GetQuestion(), "Postgres"))
		}
		if err := sess.Answer(ctx, call, answers...); err != nil {
			fmt.Println(err) // e.g. INVALID_ARGUMENT naming an option that is not offered
			return
		}
	}
	for ev, err := range sess.UntilSettled(ctx) {
		if err != nil {
			fmt.Println(err)
			return
		}
		switch ev.Kind() {
		case parkway.KindTextBlockDelta:
			fmt.Print(ev.Delta())
		case parkway.KindTextBlockEnd:
			fmt.Println()
		case parkway.KindReplyEnd:
			fmt.Println("finished:", ev.GetReplyEnd().GetFinishedReason())
		}
	}
	// Output:
	// Which database should we use?
	// - Postgres: Relational
	// - SQLite: Embedded
	// Going with Postgres.
	// finished: FINISHED_REASON_COMPLETED
}

// A parked reply is stored durably: another client (another process, or this one after a restart
// of either side) attaches to the session and answers what it waits for.
func ExampleClient_Attach() {
	addr := exampleServer(`{"turns": [
		{"toolCalls": [{"id": "c1", "name": "Bash", "input": {"command": "touch notes.txt"}}]},
		{"text": "Created notes.txt."}
	]}`)
	ctx := context.Background()

	// One frontend sends a message; the reply parks and the frontend goes away, keeping the session's
	// id and the seq of the last event it read.
	id, seen, err := sendAndLeave(ctx, addr, "make notes.txt")
	if err != nil {
		fmt.Println(err)
		return
	}
	restartExampleServer() // the server stops and starts again

	client, err := parkway.NewClient(addr)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	info, err := client.GetSession(ctx, id)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(info.GetStatus(), "with", len(info.GetPendingToolCalls()), "pending call")

	// Attached after what it saw, the new stream replays nothing and re-announces what the reply
	// waits for (seq 0, replayed). Without WithAfterSeq it would replay the session from its start.
	sess, err := client.Attach(ctx, id, parkway.WithAfterSeq(seen))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sess.Close()
	for ev, err := range sess.Events(ctx) {
		if err != nil {
			fmt.Println(err)
			return
		}
		switch ev.Kind() {
		case parkway.KindRequireUserConfirm:
			for _, call := range ev.ToolCalls() {
				fmt.Printf("approve? %s %s (re-announced: %t)\n", call.GetName(), call.GetInput(), ev.GetReplayed())
				if err := sess.Confirm(ctx, call); err != nil {
					fmt.Println(err)
					return
				}
			}
		case parkway.KindTextBlockDelta:
			fmt.Print(ev.Delta())
		case parkway.KindTextBlockEnd:
			fmt.Println()
		case parkway.KindReplyEnd:
			fmt.Println("finished:", ev.GetReplyEnd().GetFinishedReason())
			return
		}
	}
	// Output:
	// SESSION_STATUS_AWAITING_PERMISSION with 1 pending call
	// approve? Bash {"command":"touch notes.txt"} (re-announced: true)
	// Created notes.txt.
	// finished: FINISHED_REASON_COMPLETED
}

// sendAndLeave is a frontend that sends text to a new session of "assistant", reads the reply until
// it settles and closes; it returns the session's id and the last seq it read.
func sendAndLeave(ctx context.Context, addr, text string) (id string, lastSeq uint64, err error) {
	client, err := parkway.NewClient(addr)
	if err != nil {
		return "", 0, err
	}
	defer client.Close()
	info, err := client.CreateSession(ctx, "assistant")
	if err != nil {
		return "", 0, err
	}
	sess, err := client.Attach(ctx, info.GetId())
	if err != nil {
		return "", 0, err
	}
	defer sess.Close()
	for _, err := range sess.Send(ctx, text) {
		if err != nil {
			return "", 0, err
		}
	}
	return sess.ID(), sess.LastSeq(), nil
}

// A refused input is a gRPC status error: status.Code gives its code, and FieldViolations the
// fields at fault of an INVALID_ARGUMENT (PreconditionViolations explains a FAILED_PRECONDITION).
// The reply stays parked, waiting for a valid answer.
func ExampleFieldViolations() {
	addr := exampleServer(`{"turns": [
		{"toolCalls": [{"id": "a1", "name": "AskUser", "input": {"questions": [{
			"question": "Which database should we use?", "header": "Database",
			"options": [{"label": "Postgres", "description": "Relational"}, {"label": "SQLite", "description": "Embedded"}]
		}]}}]}
	]}`)
	ctx := context.Background()

	client, err := parkway.NewClient(addr)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	info, err := client.CreateSession(ctx, "assistant")
	if err != nil {
		fmt.Println(err)
		return
	}
	sess, err := client.Attach(ctx, info.GetId())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sess.Close()

	var questions []*parkway.ToolCall
	for ev, err := range sess.Send(ctx, "set up a database") {
		if err != nil {
			fmt.Println(err)
			return
		}
		if ev.Kind() == parkway.KindRequireExternalExecution {
			questions = append(questions, ev.ToolCalls()...)
		}
	}
	for _, call := range questions {
		err := sess.Answer(ctx, call, parkway.Selected("Which database should we use?", "Oracle"))
		fmt.Println(status.Code(err))
		for _, violation := range parkway.FieldViolations(err) {
			fmt.Println(violation.GetField())
		}
	}
	// Output:
	// InvalidArgument
	// external_execution_result.execution_results[0].ask_user.answers[0].selected[0]
}

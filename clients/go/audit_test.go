package parkway_test

import (
	"testing"

	parkway "github.com/parkway-dev/parkway/clients/go"
	pb "github.com/parkway-dev/parkway/clients/go/gen/parkway/v1"
)

// TestAuditRecords checks that an automatic denial by a rule is listed by ListAuditRecords and
// AuditRecords, with the rule that decided, and that filters by session and tool call apply.
func TestAuditRecords(t *testing.T) {
	t.Parallel()
	env := startEnv(t, []map[string]any{{
		"id":          "assistant",
		"permissions": map[string]any{"deny": []string{"Bash(rm:*)"}},
	}})
	env.play(t, `{"turns": [
		{"toolCalls": [{"id": "c1", "name": "Bash", "input": {"command": "rm -r build"}}]},
		{"text": "Not allowed."}
	]}`)
	ctx := testContext(t)
	sess := env.attachNew(ctx, t, "assistant")
	// The server names the call (the script's c1 is the model's id for it).
	callID := firstOf(collect(t, sess.Send(ctx, "clean up")), parkway.KindToolCallStart).ToolCallID()

	var got []*pb.AuditRecord
	for r, err := range env.client.AuditRecords(ctx, sess.ID()) {
		if err != nil {
			t.Fatalf("AuditRecords: %v", err)
		}
		got = append(got, r)
	}
	if len(got) != 1 {
		t.Fatalf("AuditRecords = %v, want one record", got)
	}
	r := got[0]
	if r.GetKind() != pb.AuditKind_AUDIT_KIND_DENIED_BY_RULE || r.GetActor() != "server" ||
		r.GetToolCallId() != callID || r.GetRule() != "Bash(rm:*)" || r.GetSessionId() != sess.ID() {
		t.Errorf("record = %v, want DENIED_BY_RULE by server of %s with Bash(rm:*)", r, callID)
	}

	for _, tc := range []struct {
		name string
		req  *pb.ListAuditRecordsRequest
		want int
	}{
		{"whole tenant", nil, 1},
		{"by call", &pb.ListAuditRecordsRequest{ToolCallId: callID}, 1},
		{"other call", &pb.ListAuditRecordsRequest{SessionId: sess.ID(), ToolCallId: "c1"}, 0},
		{"other session", &pb.ListAuditRecordsRequest{SessionId: "ses_nope"}, 0},
	} {
		page, err := env.client.ListAuditRecords(ctx, tc.req)
		if err != nil {
			t.Fatalf("%s: ListAuditRecords: %v", tc.name, err)
		}
		if len(page.GetRecords()) != tc.want {
			t.Errorf("%s: %d records, want %d", tc.name, len(page.GetRecords()), tc.want)
		}
	}
}

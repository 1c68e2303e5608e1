package parkway_test

import (
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestKeepaliveIdleStream attaches with the client's default keepalive to a server that pings every
// 500 ms (1 s timeout) and lets the stream idle for several of its intervals: the stream stays
// attached (no reconnect, its place under streamsPerSession still held) and works afterwards.
func TestKeepaliveIdleStream(t *testing.T) {
	t.Parallel()
	env := startEnvConfig(t, []map[string]any{{"id": "assistant"}}, map[string]any{
		"keepalive": map[string]any{"time": "500ms", "timeout": "1s"},
		"limits":    map[string]any{"streamsPerSession": 1},
	})
	env.play(t, `{"turns": [{"text": "Still here."}]}`)
	ctx := testContext(t)
	sess := env.attachNew(ctx, t, "assistant")

	time.Sleep(3 * time.Second)
	if n := sess.Attachments(); n != 1 {
		t.Fatalf("the stream was attached %d times over an idle stretch; want 1 (no disconnect)", n)
	}
	_, err := env.client.Attach(ctx, sess.ID())
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("a second attach: %v; want RESOURCE_EXHAUSTED (the idle stream holds the place)", err)
	}
	if got := text(collect(t, sess.Send(ctx, "hi"))); got != "Still here." {
		t.Fatalf("reply over the idle stream = %q", got)
	}
}

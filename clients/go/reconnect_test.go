package parkway_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	parkway "github.com/parkway-dev/parkway/clients/go"
	pb "github.com/parkway-dev/parkway/clients/go/gen/parkway/v1"
)

const crashScript = `{"turns": [
	{"toolCalls": [{"id": "c1", "name": "Bash", "input": {"command": "touch survived.txt && echo ok"}}]},
	{"text": "Survived the crash."}
]}`

// TestReconnectAfterCrash kills the server with SIGKILL while a reply is parked and starts it again
// on the same data directory: the session attaches again by itself, the consumer's confirmation
// (sent while the server is down) reaches the restarted server, the reply completes, and no event
// is seen twice. The server comes back on the same address, or on a new one that the client learns
// through WithAddressFunc. Finally the server is killed for good, and a session with a short
// reconnect window gives up.
func TestReconnectAfterCrash(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		sameAddr bool
	}{
		{name: "same address", sameAddr: true},
		{name: "new address via WithAddressFunc", sameAddr: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := startEnv(t, []map[string]any{{"id": "assistant"}})
			env.play(t, crashScript)
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()

			client := env.client
			if !tc.sameAddr {
				server := env.server
				var err error
				client, err = parkway.NewClient(server.Addr(), parkway.WithTimeout(rpcTimeout),
					parkway.WithAddressFunc(func(context.Context) (string, error) { return server.Addr(), nil }))
				if err != nil {
					t.Fatalf("NewClient: %v", err)
				}
				defer client.Close()
			}
			info, err := client.CreateSession(ctx, "assistant")
			if err != nil {
				t.Fatalf("CreateSession: %v", err)
			}
			sess, err := client.Attach(ctx, info.GetId())
			if err != nil {
				t.Fatalf("Attach: %v", err)
			}
			defer sess.Close()

			before := collect(t, sess.Send(ctx, "make a file"))
			if before[len(before)-1].Kind() != parkway.KindReplyParked {
				t.Fatalf("the reply did not park: %v", kinds(before))
			}
			call := firstOf(before, parkway.KindRequireUserConfirm).ToolCalls()[0]

			oldAddr := env.server.Addr()
			env.server.Kill()
			// Whether the client has noticed the crash yet or not, the confirmation is sent (again)
			// on the stream attached to the restarted server.
			confirmed := make(chan error, 1)
			go func() { confirmed <- sess.Confirm(ctx, call) }()

			if err := env.server.Start(tc.sameAddr); err != nil {
				t.Fatalf("restarting the server: %v", err)
			}
			if tc.sameAddr && env.server.Addr() != oldAddr {
				t.Fatalf("the server came back on %s, not %s", env.server.Addr(), oldAddr)
			}
			if err := <-confirmed; err != nil {
				t.Fatalf("Confirm across the crash: %v", err)
			}
			after := collect(t, sess.UntilSettled(ctx))

			want := []string{
				"tool_result_start c1", "tool_result_text_delta c1", "tool_result_end c1 SUCCESS",
				"model_call_start", "text_block_start", "text_block_delta", "text_block_end", "model_call_end",
				"reply_end",
			}
			// The script calls it c1; the server named it.
			aliases := newCallAliases()
			aliases.bind("c1", call.GetId())
			if got := shapeAgainst(after, want, aliases); !slices.Equal(got, want) {
				t.Errorf("events after the crash:\n got: %v\nwant: %v", got, want)
			}
			if got := text(after); got != "Survived the crash." {
				t.Errorf("answer = %q", got)
			}
			if n := sess.Attachments(); n < 2 {
				t.Errorf("Attachments() = %d, want a second attach after the crash", n)
			}
			// Every logged event exactly once, in order, gap-free; nothing re-announced.
			all := append(before, after...)
			for i, ev := range all {
				if ev.GetSeq() != uint64(i+1) {
					t.Errorf("event %d (%s) has seq %d, want %d", i, ev.Kind(), ev.GetSeq(), i+1)
				}
			}
			if _, err := os.Stat(filepath.Join(info.GetWorkingDirectories()[0], "survived.txt")); err != nil {
				t.Errorf("the confirmed command did not run: %v", err)
			}
			got, err := client.GetSession(ctx, info.GetId())
			if err != nil || got.GetStatus() != pb.SessionStatus_SESSION_STATUS_IDLE {
				t.Errorf("GetSession = %v, %v; want IDLE", got.GetStatus(), err)
			}

			// A server that does not come back within the reconnect window fails the session: the
			// waiting input and the reader get UNAVAILABLE.
			short, err := client.Attach(ctx, info.GetId(), parkway.WithAfterSeq(sess.LastSeq()), parkway.WithReconnectWindow(time.Second))
			if err != nil {
				t.Fatalf("Attach: %v", err)
			}
			env.server.Kill()
			if err := short.Interrupt(ctx); status.Code(err) != codes.Unavailable {
				t.Errorf("Interrupt with the server gone = %v, want UNAVAILABLE", err)
			}
			if _, err := short.Next(ctx); status.Code(err) != codes.Unavailable {
				t.Errorf("Next with the server gone = %v, want UNAVAILABLE", err)
			}
			if err := short.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if _, err := short.Next(ctx); !errors.Is(err, parkway.ErrSessionClosed) {
				t.Errorf("Next after Close = %v, want ErrSessionClosed", err)
			}
		})
	}
}

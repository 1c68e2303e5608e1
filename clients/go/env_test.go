package parkway_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	parkway "github.com/parkway-dev/parkway/clients/go"
	"github.com/parkway-dev/parkway/clients/go/internal/testserver"
)

// testEnv is a scripted model, a Parkway server whose agents use it, and a client.
type testEnv struct {
	model   *testserver.MockModel
	server  *testserver.Server
	client  *parkway.Client
	workdir string // every agent's working directory; sessions work in <workdir>/<session id>
}

// startEnv starts a scripted model and a server with the given agents (each gets the env's working
// directory unless it names its own), and dials it with opts.
func startEnv(t *testing.T, agents []map[string]any, opts ...parkway.Option) *testEnv {
	t.Helper()
	return startEnvConfig(t, agents, nil, opts...)
}

// startEnvConfig is startEnv with further top-level config keys.
func startEnvConfig(t *testing.T, agents []map[string]any, config map[string]any, opts ...parkway.Option) *testEnv {
	t.Helper()
	workdir := filepath.Join(t.TempDir(), "work")
	if err := os.MkdirAll(workdir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, a := range agents {
		if _, ok := a["workingDirectories"]; !ok {
			a["workingDirectories"] = []string{workdir}
		}
	}
	model := testserver.StartMockModel(t)
	server := testserver.StartServer(t, testserver.ServerOptions{ModelURL: model.URL, Agents: agents, Config: config})
	opts = append([]parkway.Option{parkway.WithTimeout(rpcTimeout)}, opts...)
	client, err := parkway.NewClient(server.Addr(), opts...)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	t.Cleanup(func() { _ = client.Close() })
	return &testEnv{model: model, server: server, client: client, workdir: workdir}
}

// play loads a script into the scripted model.
func (e *testEnv) play(t *testing.T, script string) {
	t.Helper()
	if err := e.model.Reset(t.Context(), []byte(script)); err != nil {
		t.Fatal(err)
	}
}

// attachNew creates a session of agentID and attaches to it; the stream is closed when t finishes.
func (e *testEnv) attachNew(ctx context.Context, t *testing.T, agentID string, opts ...parkway.SessionOption) *parkway.Session {
	t.Helper()
	info, err := e.client.CreateSession(ctx, agentID, opts...)
	if err != nil {
		t.Fatalf("CreateSession(%s): %v", agentID, err)
	}
	sess, err := e.client.Attach(ctx, info.GetId())
	if err != nil {
		t.Fatalf("Attach: %v", err)
	}
	t.Cleanup(func() { _ = sess.Close() })
	return sess
}

// testContext bounds a test's waits, so that a test that would hang fails instead (and runs its
// cleanups, which stop the servers).
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// collect gathers events until the iteration ends, failing t on an error.
func collect(t *testing.T, events func(func(*parkway.Event, error) bool)) []*parkway.Event {
	t.Helper()
	var out []*parkway.Event
	for ev, err := range events {
		if err != nil {
			t.Fatalf("after %d events: %v", len(out), err)
		}
		out = append(out, ev)
	}
	return out
}

// kinds lists the events' kinds, collapsing consecutive deltas of one kind.
func kinds(events []*parkway.Event) []string {
	return shapeAgainst(events, nil, newCallAliases())
}

// text concatenates the text deltas of events.
func text(events []*parkway.Event) string {
	var s string
	for _, ev := range events {
		if ev.Kind() == parkway.KindTextBlockDelta {
			s += ev.Delta()
		}
	}
	return s
}

// firstOf returns the first event of kind, or nil.
func firstOf(events []*parkway.Event, kind parkway.Kind) *parkway.Event {
	for _, ev := range events {
		if ev.Kind() == kind {
			return ev
		}
	}
	return nil
}

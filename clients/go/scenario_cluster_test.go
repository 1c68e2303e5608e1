package parkway_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	parkway "github.com/parkway-dev/parkway/clients/go"
	pb "github.com/parkway-dev/parkway/clients/go/gen/parkway/v1"
	"github.com/parkway-dev/parkway/clients/go/internal/testserver"
)

const (
	// clusterNodes is how many nodes a cluster run starts on its database.
	clusterNodes = 3
	// spreadOver is how many of the nodes a scenario's streams use: before step i the runner's
	// stream moves to node i mod spreadOver, and the session's watcher attaches to node
	// 1 mod spreadOver.
	spreadOver = clusterNodes
	// clusterScenarioTimeout bounds one whole scenario of a cluster run: restarting three nodes and
	// their MCP servers at once takes much longer than one server on a busy machine.
	clusterScenarioTimeout = 3 * scenarioTimeout
	// retryDelay is the pause before a stream attaches again to a node that refused it or broke.
	retryDelay = 100 * time.Millisecond
)

// clusterEnv is the nodes of a cluster run and a client for each.
type clusterEnv struct {
	nodes   *testserver.Cluster
	clients []*parkway.Client // clients[i] talks to node i only
}

// TestScenariosCluster runs every scenario file, as TestScenarios does, against three nodes on one
// PostgreSQL database. Before each step the runner's stream moves to the next node (a new stream
// resuming after the last event the runner read), and the step's input goes there; restart and
// crash restart every node on its address and node id. A watcher stream on one node follows each
// session from its first event, and must see every event once, in seq order, with the ids the
// runner saw.
func TestScenariosCluster(t *testing.T) {
	t.Parallel()
	loaded, agents := loadScenarios(t)
	postgres := testserver.StartPostgres(t)
	model := testserver.StartMockModel(t)
	nodes := testserver.StartCluster(t, testserver.ServerOptions{ModelURL: model.URL, Agents: agents},
		postgres.URL, clusterNodes)
	env := &scenarioEnv{model: model, cluster: &clusterEnv{nodes: nodes}}
	for _, node := range nodes.Nodes {
		// Nodes restart on their address, so each client keeps talking to its node.
		client, err := parkway.NewClient(node.Addr(), parkway.WithTimeout(rpcTimeout))
		if err != nil {
			t.Fatalf("NewClient: %v", err)
		}
		t.Cleanup(func() { _ = client.Close() })
		env.cluster.clients = append(env.cluster.clients, client)
	}
	env.client = env.cluster.clients[0]
	playScenarios(t, env, loaded)
}

// spreadSession is what a cluster run keeps of one session of a scenario.
type spreadSession struct {
	id      string
	watcher *sessionWatcher
	// lastSeq is the seq of the last event the runner read: a moved stream resumes after it.
	lastSeq uint64
	// ids holds the id of every event the runner read, by seq.
	ids map[uint64]string
	// announced holds the calls of the REQUIRE_* events the runner read, by kind and id: the ones
	// a new stream announces again are not new to the runner.
	announced map[string]bool
}

// spreadState is a cluster run's state for one scenario.
type spreadState struct {
	node     int              // the node the runner's stream is attached to
	sessions []*spreadSession // the scenario's sessions, the current one last
}

// current returns the session the runner plays.
func (s *spreadState) current() *spreadSession { return s.sessions[len(s.sessions)-1] }

// attachOnNode attaches the runner to its new session on its current node, and starts the session's
// watcher.
func (r *scenarioRunner) attachOnNode(ctx context.Context) {
	if r.spread == nil {
		r.spread = &spreadState{}
	}
	clients := r.env.cluster.clients
	w := watch(ctx, clients[1%spreadOver].AgentService(), r.sessionID)
	r.spread.sessions = append(r.spread.sessions, &spreadSession{
		id: r.sessionID, watcher: w, ids: map[uint64]string{}, announced: map[string]bool{},
	})
	r.attachTo(ctx, r.spread.node, 0)
}

// attachTo attaches the runner's stream to node after seq after. UNAVAILABLE is tried again, as a
// client does: just after a restart the client's connection to the node may still be waiting to
// dial again.
func (r *scenarioRunner) attachTo(ctx context.Context, node int, after uint64) {
	for {
		// Each attempt's handshake gets as long as a step's events, so that a node that never
		// answers the attach is named as such.
		attempt, cancel := context.WithTimeout(ctx, settleTimeout)
		// The stream waits as long as its scenario may take for the nodes to come back after a
		// restart.
		sess, err := r.env.cluster.clients[node].Attach(attempt, r.sessionID, parkway.WithAfterSeq(after),
			parkway.WithReconnectWindow(clusterScenarioTimeout))
		cancel()
		if err == nil {
			r.sess, r.spread.node = sess, node
			return
		}
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			r.t.Fatalf("Attach(%s) on node-%d after seq %d: no answer within %s", r.sessionID, node, after, settleTimeout)
		}
		if status.Code(err) != codes.Unavailable || ctx.Err() != nil {
			r.t.Fatalf("Attach(%s) on node-%d after seq %d: %v", r.sessionID, node, after, err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(retryDelay):
		}
	}
}

// moveStream moves the runner's stream to node step mod spreadOver before the step: it closes the
// current stream and attaches a new one there after the last event the runner read, so the events
// it has not read yet come again and none twice.
func (r *scenarioRunner) moveStream(ctx context.Context, step int) {
	node := step % spreadOver
	if step == 0 && node == r.spread.node {
		return // attached there by open
	}
	_ = r.sess.Close()
	r.attachTo(ctx, node, r.spread.current().lastSeq)
}

// restartCluster restarts every node on its address, gracefully or (crash) with SIGKILL, and waits
// for the runner's stream to attach again.
func (r *scenarioRunner) restartCluster(ctx context.Context, crash bool) error {
	nodes := r.env.cluster.nodes
	if crash {
		if err := nodes.Crash(); err != nil {
			r.t.Fatalf("starting the nodes after the kill: %v", err)
		}
	} else if err := nodes.Restart(); err != nil {
		r.t.Fatalf("restarting the nodes: %v", err)
	}
	return r.sess.WaitConnected(ctx)
}

// consume takes the events the runner read for a step: it leaves out the calls announced again
// that it read before (as a Session does after its own reconnects), and checks that the logged
// events follow the last one read without a gap or a repeat.
func (r *scenarioRunner) consume(label string, events []*parkway.Event) []*parkway.Event {
	sess := r.spread.current()
	var out []*parkway.Event
	for _, ev := range events {
		if seq := ev.GetSeq(); seq > 0 {
			if seq != sess.lastSeq+1 {
				r.t.Fatalf("%s: the runner read seq %d after seq %d", label, seq, sess.lastSeq)
			}
			sess.lastSeq = seq
			sess.ids[seq] = ev.GetId()
		} else if ev = sess.unseen(ev); ev == nil {
			continue
		}
		for _, call := range ev.ToolCalls() {
			sess.announced[string(ev.Kind())+" "+call.GetId()] = true
		}
		out = append(out, ev)
	}
	return out
}

// unseen reduces a REQUIRE_* event announced again (seq 0) to the calls the runner has not read
// yet; nil when none is left.
func (s *spreadSession) unseen(ev *parkway.Event) *parkway.Event {
	all := ev.ToolCalls()
	var calls []*pb.ToolCallBlock
	for _, call := range all {
		if !s.announced[string(ev.Kind())+" "+call.GetId()] {
			calls = append(calls, call)
		}
	}
	switch {
	case len(all) == 0 || len(calls) == len(all):
		return ev
	case len(calls) == 0:
		return nil
	}
	msg := proto.Clone(ev.ServerEvent).(*pb.ServerEvent)
	if confirm := msg.GetRequireUserConfirm(); confirm != nil {
		confirm.ToolCalls = calls
	} else {
		msg.GetRequireExternalExecution().ToolCalls = calls
	}
	return &parkway.Event{ServerEvent: msg}
}

// checkWatchers checks what each session's watcher saw once it has followed the session to its
// last stored event: every seq from 1 on exactly once and in order, and at each seq the runner
// read, the event the runner read.
func (r *scenarioRunner) checkWatchers(ctx context.Context) {
	for _, sess := range r.spread.sessions {
		info, err := r.env.client.GetSession(ctx, sess.id)
		if err != nil {
			r.t.Fatalf("watcher: GetSession(%s): %v", sess.id, err)
		}
		last := info.GetLastSeq()
		wctx, cancel := context.WithTimeout(ctx, settleTimeout)
		seen, err := sess.watcher.waitFor(wctx, last)
		cancel()
		if err != nil {
			r.t.Fatalf("watcher of %s: waiting for seq %d: %v; it saw %s", sess.id, last, err, describeSeqs(seen))
		}
		for i, ev := range seen {
			if ev.GetSeq() != uint64(i+1) {
				r.t.Fatalf("watcher of %s: the events' seqs are %s, want 1..%d", sess.id, describeSeqs(seen), last)
			}
		}
		for seq, id := range sess.ids {
			if got := seen[seq-1].GetId(); got != id {
				r.t.Errorf("watcher of %s: event %s at seq %d, the runner read %s", sess.id, got, seq, id)
			}
		}
	}
}

// stopWatchers ends the scenario's watchers.
func (r *scenarioRunner) stopWatchers() {
	if r.spread == nil {
		return
	}
	for _, sess := range r.spread.sessions {
		sess.watcher.stop()
	}
}

// describeSeqs writes the seqs of events compactly: "1..7, 7, 9..12".
func describeSeqs(events []*pb.ServerEvent) string {
	var parts []string
	for i := 0; i < len(events); {
		j := i
		for j+1 < len(events) && events[j+1].GetSeq() == events[j].GetSeq()+1 {
			j++
		}
		if j == i {
			parts = append(parts, fmt.Sprint(events[i].GetSeq()))
		} else {
			parts = append(parts, fmt.Sprintf("%d..%d", events[i].GetSeq(), events[j].GetSeq()))
		}
		i = j + 1
	}
	if parts == nil {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}

// sessionWatcher follows one session's events on one node from its first event, on the generated
// stub rather than a Session (which drops what it already delivered), and keeps every logged event
// as it arrives. When its stream breaks with UNAVAILABLE (a restart) it attaches again after the last
// event it received.
type sessionWatcher struct {
	id     string
	agent  pb.AgentServiceClient
	cancel context.CancelFunc
	done   chan struct{} // closed when run returns

	mu       sync.Mutex
	attaches int               // attaches sent so far, to name each one's request
	events   []*pb.ServerEvent // the logged events received, duplicates included
	err      error             // why the watcher gave up, if it did
	changed  chan struct{}     // closed (and replaced) when events or err change
}

// watch starts a watcher of session id on agent; it runs until stop or until ctx ends.
func watch(ctx context.Context, agent pb.AgentServiceClient, id string) *sessionWatcher {
	ctx, cancel := context.WithCancel(ctx)
	w := &sessionWatcher{id: id, agent: agent, cancel: cancel, done: make(chan struct{}), changed: make(chan struct{})}
	go w.run(ctx)
	return w
}

func (w *sessionWatcher) run(ctx context.Context) {
	defer close(w.done)
	for {
		err := w.follow(ctx)
		if ctx.Err() != nil {
			return
		}
		if status.Code(err) != codes.Unavailable {
			w.mu.Lock()
			w.err = err
			w.broadcast()
			w.mu.Unlock()
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(retryDelay):
		}
	}
}

// follow attaches after the last event received and keeps the logged events until the stream
// breaks. Re-announced calls (seq 0, replayed) are left out: they are not logged.
func (w *sessionWatcher) follow(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := w.agent.Chat(ctx, grpc.WaitForReady(true))
	if err != nil {
		return err
	}
	w.mu.Lock()
	after := uint64(0)
	if n := len(w.events); n > 0 {
		after = w.events[n-1].GetSeq()
	}
	w.attaches++
	requestID := fmt.Sprintf("watch-%d", w.attaches)
	w.mu.Unlock()
	err = stream.Send(&pb.ClientEvent{
		SessionId: w.id,
		RequestId: requestID,
		Event:     &pb.ClientEvent_Attach{Attach: &pb.Attach{SessionId: w.id, AfterSeq: after}},
	})
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	for {
		msg, err := stream.Recv()
		if err != nil {
			return err
		}
		if ack := msg.GetInputAck(); ack != nil {
			if st := ack.GetStatus(); st.GetCode() != int32(codes.OK) {
				return status.ErrorProto(st)
			}
			continue
		}
		if msg.GetSeq() == 0 {
			if !msg.GetReplayed() {
				return fmt.Errorf("an event with seq 0 that is not a re-announcement: %v", msg)
			}
			continue
		}
		w.mu.Lock()
		w.events = append(w.events, msg)
		w.broadcast()
		w.mu.Unlock()
	}
}

// broadcast wakes waitFor. Called with mu held.
func (w *sessionWatcher) broadcast() {
	close(w.changed)
	w.changed = make(chan struct{})
}

// waitFor waits until the watcher received an event with seq at least last, and returns the events
// it received so far; the error is why it gave up, or ctx's.
func (w *sessionWatcher) waitFor(ctx context.Context, last uint64) ([]*pb.ServerEvent, error) {
	for {
		w.mu.Lock()
		events, err, changed := slices.Clone(w.events), w.err, w.changed
		w.mu.Unlock()
		if last == 0 || slices.ContainsFunc(events, func(ev *pb.ServerEvent) bool { return ev.GetSeq() >= last }) {
			return events, nil
		}
		if err != nil {
			return events, err
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return events, ctx.Err()
		}
	}
}

// stop ends the watcher and waits for it.
func (w *sessionWatcher) stop() {
	w.cancel()
	<-w.done
}

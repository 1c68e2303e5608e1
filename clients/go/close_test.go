package parkway_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"

	parkway "github.com/parkway-dev/parkway/clients/go"
)

// TestCloseManySessions creates, attaches and closes 1,500 sessions over one Client, eight at a
// time, while another session stays attached. Every call succeeds, the client keeps the one
// connection it dialled, and the long-lived session keeps its first stream and still gets a reply
// afterwards: closing a session does not reset its stream, so the server's limit on streams reset
// by a client (about 1,000 at once, then 33 a second, after which it sends GOAWAY and takes no more
// streams on the connection) is never reached.
func TestCloseManySessions(t *testing.T) {
	t.Parallel()
	const (
		sessions = 1500
		workers  = 8
	)
	var dials atomic.Int64
	dialer := func(ctx context.Context, addr string) (net.Conn, error) {
		dials.Add(1)
		var d net.Dialer
		return d.DialContext(ctx, "tcp", addr)
	}
	env := startEnv(t, []map[string]any{{"id": "assistant"}}, parkway.WithDialOptions(grpc.WithContextDialer(dialer)))
	env.play(t, `{"turns": [{"text": "Still connected."}]}`)
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	long := env.attachNew(ctx, t, "assistant")

	start := time.Now()
	var (
		next      atomic.Int64
		closed    atomic.Int64
		mu        sync.Mutex
		firstErr  error
		slowest   time.Duration
		wg        sync.WaitGroup
		churnCtx  context.Context
		stopChurn context.CancelFunc
	)
	churnCtx, stopChurn = context.WithCancel(ctx)
	defer stopChurn()
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if firstErr == nil {
			firstErr = err
			stopChurn()
		}
	}
	churn := func(i int64) error {
		info, err := env.client.CreateSession(churnCtx, "assistant")
		if err != nil {
			return fmt.Errorf("CreateSession #%d (after %d closes): %w", i, closed.Load(), err)
		}
		sess, err := env.client.Attach(churnCtx, info.GetId())
		if err != nil {
			return fmt.Errorf("Attach #%d (after %d closes): %w", i, closed.Load(), err)
		}
		began := time.Now()
		if err := sess.Close(); err != nil {
			return fmt.Errorf("Close #%d: %w", i, err)
		}
		took := time.Since(began)
		closed.Add(1)
		mu.Lock()
		slowest = max(slowest, took)
		mu.Unlock()
		return nil
	}
	for range workers {
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > sessions || churnCtx.Err() != nil {
					return
				}
				if err := churn(i); err != nil {
					fail(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		t.Fatalf("churning sessions: %v", firstErr)
	}
	t.Logf("created, attached and closed %d sessions in %s (slowest Close %s)", closed.Load(), time.Since(start).Round(time.Millisecond), slowest.Round(time.Millisecond))

	events := collect(t, long.Send(ctx, "still there?"))
	if last := events[len(events)-1]; last.Kind() != parkway.KindReplyEnd {
		t.Fatalf("the long-lived session's reply ended with %s, want REPLY_END: %v", last.Kind(), kinds(events))
	}
	if got := text(events); got != "Still connected." {
		t.Errorf("the long-lived session's reply = %q", got)
	}
	if n := long.Attachments(); n != 1 {
		t.Errorf("the long-lived session attached %d times, want 1: its connection broke while sessions were closed", n)
	}
	if n := dials.Load(); n != 1 {
		t.Errorf("the client dialled the server %d times, want 1: the server closed the connection while sessions were closed", n)
	}
}

// TestCloseHalfCloses checks how Close ends a session's stream, against an in-process server: it
// half-closes the stream and returns as soon as the server ends it; it cancels a stream the server
// keeps open (a reply running) after a grace period of a second; it does not wait for a stream that
// is already gone; and inputs sent while Close runs end with nil or ErrSessionClosed.
func TestCloseHalfCloses(t *testing.T) {
	t.Parallel()
	// quick is well under Close's grace period: a Close that took longer waited for it.
	const quick = 900 * time.Millisecond

	t.Run("idle stream", func(t *testing.T) {
		t.Parallel()
		fake, sess := attachFake(t, acknowledge)
		began := time.Now()
		if err := sess.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if took := time.Since(began); took >= quick {
			t.Errorf("Close took %s; want it to return once the server ended the half-closed stream", took)
		}
		select {
		case err := <-fake.ended:
			if !errors.Is(err, io.EOF) {
				t.Errorf("the server's stream ended with %v, want io.EOF (the client half-closed it)", err)
			}
		case <-testContext(t).Done():
			t.Fatal("the server's stream did not end")
		}
		if _, err := sess.Next(testContext(t)); !errors.Is(err, parkway.ErrSessionClosed) {
			t.Errorf("Next after Close = %v, want ErrSessionClosed", err)
		}
		began = time.Now()
		if err := sess.Close(); err != nil || time.Since(began) >= quick {
			t.Errorf("a second Close = %v after %s, want nil at once", err, time.Since(began))
		}
	})

	t.Run("stream the server keeps open", func(t *testing.T) {
		t.Parallel()
		_, sess := attachFake(t, stall)
		next := make(chan error, 1)
		go func() { _, err := sess.Next(testContext(t)); next <- err }()
		closed := make(chan time.Duration, 1)
		began := time.Now()
		go func() { _ = sess.Close(); closed <- time.Since(began) }()
		select {
		case err := <-next:
			if !errors.Is(err, parkway.ErrSessionClosed) {
				t.Errorf("Next waiting when Close was called = %v, want ErrSessionClosed", err)
			}
			if took := time.Since(began); took >= quick {
				t.Errorf("Next returned %s after Close was called; want at once", took)
			}
		case <-testContext(t).Done():
			t.Fatal("Next did not return after Close")
		}
		select {
		case took := <-closed:
			if took < quick || took > 10*time.Second {
				t.Errorf("Close took %s; want it to cancel the stream after its grace period of 1s", took)
			}
		case <-testContext(t).Done():
			t.Fatal("Close did not return")
		}
		if err := sess.SendEvent(testContext(t), userMessage("hi")); !errors.Is(err, parkway.ErrSessionClosed) {
			t.Errorf("SendEvent after Close = %v, want ErrSessionClosed", err)
		}
	})

	t.Run("stream already ended", func(t *testing.T) {
		t.Parallel()
		_, sess := attachFake(t, hangUp)
		if _, err := sess.Next(testContext(t)); err == nil {
			t.Fatal("Next after the server ended the stream returned an event, want its error")
		}
		began := time.Now()
		if err := sess.Close(); err != nil || time.Since(began) >= quick {
			t.Errorf("Close = %v after %s, want nil at once", err, time.Since(began))
		}
	})

	t.Run("inputs sent while closing", func(t *testing.T) {
		t.Parallel()
		fake, client := startFakeChat(t, acknowledge)
		go func() {
			for range fake.received {
			}
		}()
		for i := range 20 {
			sess, err := client.Attach(testContext(t), "s1")
			if err != nil {
				t.Fatalf("Attach #%d: %v", i, err)
			}
			sent := make(chan error, 4)
			for range cap(sent) {
				go func() { sent <- sess.SendEvent(testContext(t), userMessage("hi")) }()
			}
			if err := sess.Close(); err != nil {
				t.Fatalf("Close #%d: %v", i, err)
			}
			for range cap(sent) {
				if err := <-sent; err != nil && !errors.Is(err, parkway.ErrSessionClosed) {
					t.Errorf("SendEvent racing Close #%d = %v, want nil or ErrSessionClosed", i, err)
				}
			}
		}
	})
}

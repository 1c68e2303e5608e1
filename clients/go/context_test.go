package parkway_test

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	parkway "github.com/parkway-dev/parkway/clients/go"
	pb "github.com/parkway-dev/parkway/clients/go/gen/parkway/v1"
)

// chatBehavior is what a fakeChat does on a Chat stream.
type chatBehavior int

const (
	// acknowledge answers every client event with an OK input_ack.
	acknowledge chatBehavior = iota
	// stall acknowledges the attach, then reads nothing more: the stream's flow-control window
	// fills up and the client's sends block.
	stall
	// silent reads the attach and never answers it.
	silent
	// hangUp acknowledges the attach, then ends the stream with status OK.
	hangUp
)

// fakeChat is an in-process AgentService whose Chat streams behave as told, to drive the client into
// the waits a real server rarely causes; received holds every client event it read, and ended the
// error that ended its reading of each stream (io.EOF when the client half-closed it; the stream
// then ends with OK).
type fakeChat struct {
	pb.UnimplementedAgentServiceServer
	behavior chatBehavior
	received chan *pb.ClientEvent
	ended    chan error
}

func (f *fakeChat) Chat(stream pb.AgentService_ChatServer) error {
	for {
		ev, err := stream.Recv()
		if err != nil {
			select {
			case f.ended <- err:
			default:
			}
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		f.received <- ev
		if f.behavior == silent || (f.behavior == stall && ev.GetAttach() == nil) {
			<-stream.Context().Done()
			return stream.Context().Err()
		}
		ack := &pb.ServerEvent{Event: &pb.ServerEvent_InputAck{InputAck: &pb.InputAck{RequestId: ev.GetRequestId()}}}
		if err := stream.Send(ack); err != nil {
			return err
		}
		switch f.behavior {
		case stall:
			<-stream.Context().Done()
			return stream.Context().Err()
		case hangUp:
			return nil
		}
	}
}

// startFakeChat serves a fakeChat on a loopback port with the smallest flow-control windows (which
// also turns off gRPC's window growth) and returns it with a client connected to it.
func startFakeChat(t *testing.T, behavior chatBehavior) (*fakeChat, *parkway.Client) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fake := &fakeChat{behavior: behavior, received: make(chan *pb.ClientEvent, 64), ended: make(chan error, 64)}
	srv := grpc.NewServer(grpc.InitialWindowSize(64<<10), grpc.InitialConnWindowSize(64<<10))
	pb.RegisterAgentServiceServer(srv, fake)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	client, err := parkway.NewClient(lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	return fake, client
}

// attachFake starts a fakeChat with behavior, attaches session "s1" to it and returns once the
// server has the attach.
func attachFake(t *testing.T, behavior chatBehavior) (*fakeChat, *parkway.Session) {
	t.Helper()
	fake, client := startFakeChat(t, behavior)
	sess, err := client.Attach(testContext(t), "s1")
	if err != nil {
		t.Fatalf("Attach: %v", err)
	}
	<-fake.received // the attach
	return fake, sess
}

// canceled reports whether err is what a call returns for a cancelled ctx: ctx's error, or a gRPC
// status with code CANCELED.
func canceled(err error) bool {
	return errors.Is(err, context.Canceled) || status.Code(err) == codes.Canceled
}

// firstError returns the first error an iteration yields, or nil.
func firstError[T any](seq func(func(T, error) bool)) error {
	for _, err := range seq {
		if err != nil {
			return err
		}
	}
	return nil
}

// TestCancelledContext calls every method that takes a ctx with one already cancelled: each returns
// ctx's error (or CANCELED) at once, and no input reaches the server.
func TestCancelledContext(t *testing.T) {
	t.Parallel()
	fake, client := startFakeChat(t, acknowledge)
	sess, err := client.Attach(testContext(t), "s1")
	if err != nil {
		t.Fatalf("Attach: %v", err)
	}
	defer sess.Close()
	<-fake.received // the attach

	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	call := &parkway.ToolCall{Id: "call_1", Name: "Bash"}
	tests := []struct {
		name string
		call func(ctx context.Context) error
	}{
		{"Client.Attach", func(ctx context.Context) error { _, err := client.Attach(ctx, "s1"); return err }},
		{"Client.CreateSession", func(ctx context.Context) error { _, err := client.CreateSession(ctx, "a"); return err }},
		{"Client.GetSession", func(ctx context.Context) error { _, err := client.GetSession(ctx, "s1"); return err }},
		{"Client.ListSessions", func(ctx context.Context) error { _, err := client.ListSessions(ctx, nil); return err }},
		{"Client.Sessions", func(ctx context.Context) error { return firstError(client.Sessions(ctx, 0, "")) }},
		{"Client.DeleteSession", func(ctx context.Context) error { return client.DeleteSession(ctx, "s1") }},
		{"Client.ListAgents", func(ctx context.Context) error { _, err := client.ListAgents(ctx); return err }},
		{"Client.Reply", func(ctx context.Context) error {
			_, err := client.Reply(ctx, &pb.ReplyRequest{SessionId: "s1"})
			return err
		}},
		{"Client.ListAuditRecords", func(ctx context.Context) error { _, err := client.ListAuditRecords(ctx, nil); return err }},
		{"Client.AuditRecords", func(ctx context.Context) error { return firstError(client.AuditRecords(ctx, "")) }},
		{"Session.Next", func(ctx context.Context) error { _, err := sess.Next(ctx); return err }},
		{"Session.Events", func(ctx context.Context) error { return firstError(sess.Events(ctx)) }},
		{"Session.UntilSettled", func(ctx context.Context) error { return firstError(sess.UntilSettled(ctx)) }},
		{"Session.Send", func(ctx context.Context) error { return firstError(sess.Send(ctx, "hello")) }},
		{"Session.SendEvent", func(ctx context.Context) error {
			return sess.SendEvent(ctx, &pb.ClientEvent{Event: &pb.ClientEvent_UserInterrupt{UserInterrupt: &pb.UserInterrupt{}}})
		}},
		{"Session.Confirm", func(ctx context.Context) error { return sess.Confirm(ctx, call) }},
		{"Session.Deny", func(ctx context.Context) error { return sess.Deny(ctx, call, "no") }},
		{"Session.SubmitResult", func(ctx context.Context) error { return sess.SubmitResult(ctx, call, parkway.Result{Output: "ok"}) }},
		{"Session.Answer", func(ctx context.Context) error { return sess.Answer(ctx, call, parkway.Selected("q", "a")) }},
		{"Session.Interrupt", func(ctx context.Context) error { return sess.Interrupt(ctx) }},
		{"Session.Reconnect", func(ctx context.Context) error { return sess.Reconnect(ctx) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.call(cancelled); !canceled(err) {
				t.Errorf("%s(cancelled ctx) = %v, want context.Canceled or CANCELED", tc.name, err)
			}
		})
	}

	// Nothing above reached the server's stream: the next event it reads is this input.
	if err := sess.Interrupt(testContext(t)); err != nil {
		t.Fatalf("Interrupt: %v", err)
	}
	if ev := <-fake.received; ev.GetUserInterrupt() == nil || len(fake.received) != 0 {
		t.Errorf("the server read %v (and %d more) after the cancelled calls, want only the last interrupt", ev, len(fake.received))
	}
	if n := sess.Attachments(); n != 1 {
		t.Errorf("Attachments() = %d, want 1: Reconnect with a cancelled ctx attached again", n)
	}
}

// TestContextEndsWaits checks that a ctx ending while a call waits on the server ends the call with
// ctx's error: an attach the server does not answer, and inputs the server does not read.
func TestContextEndsWaits(t *testing.T) {
	t.Parallel()

	t.Run("Attach unanswered", func(t *testing.T) {
		t.Parallel()
		fake, client := startFakeChat(t, silent)
		ctx, cancel := context.WithCancel(testContext(t))
		go func() {
			<-fake.received // the attach reached the server; it will never answer
			cancel()
		}()
		if _, err := client.Attach(ctx, "s1"); !errors.Is(err, context.Canceled) {
			t.Errorf("Attach = %v, want context.Canceled", err)
		}
	})

	t.Run("SendEvent while the server reads nothing", func(t *testing.T) {
		t.Parallel()
		_, sess := attachFake(t, stall)
		// A message far larger than the stream's window fills it and the client's write quota;
		// the sends after it cannot go out until the server reads.
		big := strings.Repeat("x", 1<<20)
		for i := range 3 {
			ctx, cancel := context.WithCancel(testContext(t))
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- sess.SendEvent(cancelOnWait{ctx, cancel}, userMessage(big)) }()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("SendEvent #%d = %v, want context.Canceled", i+1, err)
				}
			case <-testContext(t).Done():
				t.Fatalf("SendEvent #%d did not return after its ctx was cancelled", i+1)
			}
		}
		// Close ends the sends still blocked on the stream.
		if err := sess.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
}

// cancelOnWait is a context that is cancelled as soon as it is waited on (its Done channel asked
// for): a call that honours it returns once it waits, whatever it waits for.
type cancelOnWait struct {
	context.Context
	cancel context.CancelFunc
}

func (c cancelOnWait) Done() <-chan struct{} {
	c.cancel()
	return c.Context.Done()
}

func userMessage(text string) *pb.ClientEvent {
	return &pb.ClientEvent{Event: &pb.ClientEvent_UserMessage{UserMessage: &pb.UserMessage{Text: text}}}
}

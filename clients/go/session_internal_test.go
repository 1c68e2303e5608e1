package parkway

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parkway-dev/parkway/clients/go/gen/parkway/v1"
)

func calls(ids ...string) []*pb.ToolCallBlock {
	var out []*pb.ToolCallBlock
	for _, id := range ids {
		out = append(out, &pb.ToolCallBlock{Id: id, Name: "Bash"})
	}
	return out
}

func confirmEv(seq uint64, replayed bool, ids ...string) *pb.ServerEvent {
	return &pb.ServerEvent{Seq: seq, Replayed: replayed, ReplyId: "r1", Event: &pb.ServerEvent_RequireUserConfirm{
		RequireUserConfirm: &pb.RequireUserConfirm{ToolCalls: calls(ids...)},
	}}
}

func externalEv(seq uint64, replayed bool, ids ...string) *pb.ServerEvent {
	return &pb.ServerEvent{Seq: seq, Replayed: replayed, ReplyId: "r1", Event: &pb.ServerEvent_RequireExternalExecution{
		RequireExternalExecution: &pb.RequireExternalExecution{ToolCalls: calls(ids...)},
	}}
}

func parkedEv(seq uint64) *pb.ServerEvent {
	return &pb.ServerEvent{Seq: seq, Event: &pb.ServerEvent_ReplyParked{ReplyParked: &pb.ReplyParked{}}}
}

// describe is "seq kind ids" for an event the consumer receives.
func describe(ev *Event) string {
	var ids []string
	for _, c := range ev.ToolCalls() {
		ids = append(ids, c.GetId())
	}
	return strings.TrimSpace(fmt.Sprintf("%d %s %s", ev.GetSeq(), ev.Kind(), strings.Join(ids, ",")))
}

// TestDeliver checks what a Session hands its consumer from what the server sends, across attaches.
func TestDeliver(t *testing.T) {
	tests := []struct {
		name     string
		afterSeq uint64
		all      bool // WithReannouncements
		in       []*pb.ServerEvent
		want     []string
	}{
		{
			name: "a logged event received again is dropped",
			in:   []*pb.ServerEvent{confirmEv(1, false, "c1"), parkedEv(2), confirmEv(1, true, "c1"), parkedEv(2)},
			want: []string{"1 require_user_confirm c1", "2 reply_parked"},
		},
		{
			name: "a re-announcement of a delivered call is dropped",
			in:   []*pb.ServerEvent{confirmEv(1, false, "c1"), parkedEv(2), confirmEv(0, true, "c1")},
			want: []string{"1 require_user_confirm c1", "2 reply_parked"},
		},
		{
			name: "a re-announcement is reduced to the calls not delivered",
			in:   []*pb.ServerEvent{confirmEv(1, false, "c1"), confirmEv(0, true, "c1", "c2")},
			want: []string{"1 require_user_confirm c1", "0 require_user_confirm c2"},
		},
		{
			name:     "a session attached after the announcement receives the re-announcement",
			afterSeq: 2,
			in:       []*pb.ServerEvent{confirmEv(0, true, "c1"), externalEv(0, true, "x1")},
			want:     []string{"0 require_user_confirm c1", "0 require_external_execution x1"},
		},
		{
			name: "re-announcements are matched by kind and call",
			in:   []*pb.ServerEvent{confirmEv(1, false, "d1"), externalEv(0, true, "d1"), confirmEv(0, true, "d1"), externalEv(0, true, "d1")},
			want: []string{"1 require_user_confirm d1", "0 require_external_execution d1"},
		},
		{
			name: "WithReannouncements delivers every re-announcement",
			all:  true,
			in:   []*pb.ServerEvent{confirmEv(1, false, "c1"), confirmEv(0, true, "c1")},
			want: []string{"1 require_user_confirm c1", "0 require_user_confirm c1"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &Session{
				cfg:       attachConfig{afterSeq: tc.afterSeq, reannouncements: tc.all},
				pending:   map[string]*pendingInput{},
				changed:   make(chan struct{}),
				lastSeq:   tc.afterSeq,
				announced: map[announcement]bool{},
				replyOf:   map[string]string{},
			}
			for _, ev := range tc.in {
				s.deliver(ev)
			}
			var got []string
			for _, ev := range s.queue {
				got = append(got, describe(ev))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("delivered %q, want %q", got, tc.want)
			}
			if tc.in[0].GetRequireUserConfirm() != nil && s.replyID(tc.in[0].GetRequireUserConfirm().GetToolCalls()[0].GetId()) != "r1" {
				t.Errorf("the reply of an announced call is not remembered")
			}
		})
	}
}

// TestDeliverAck checks that acknowledgements reach their waiter as nil or a status error with
// details, and never the consumer.
func TestDeliverAck(t *testing.T) {
	s := &Session{pending: map[string]*pendingInput{}, changed: make(chan struct{}), announced: map[announcement]bool{}, replyOf: map[string]string{}}
	ok, refused := make(chan error, 1), make(chan error, 1)
	s.pending["a"], s.pending["b"] = &pendingInput{done: ok}, &pendingInput{done: refused}
	s.deliver(&pb.ServerEvent{Event: &pb.ServerEvent_InputAck{InputAck: &pb.InputAck{RequestId: "a", Status: &spb.Status{}}}})
	st := status.New(codes.InvalidArgument, "bad answer")
	s.deliver(&pb.ServerEvent{Event: &pb.ServerEvent_InputAck{InputAck: &pb.InputAck{RequestId: "b", Status: st.Proto()}}})
	s.deliver(&pb.ServerEvent{Event: &pb.ServerEvent_InputAck{InputAck: &pb.InputAck{RequestId: "unknown"}}})
	if err := <-ok; err != nil {
		t.Errorf("applied input: %v, want nil", err)
	}
	if err := <-refused; status.Code(err) != codes.InvalidArgument || status.Convert(err).Message() != "bad answer" {
		t.Errorf("refused input: %v, want INVALID_ARGUMENT bad answer", err)
	}
	if len(s.queue) != 0 || len(s.pending) != 0 {
		t.Errorf("queue %v, pending %v; want both empty", s.queue, s.pending)
	}
}

// recordingStream is a Chat stream that records what is sent on it and fails a send after
// CloseSend, as grpc-go does.
type recordingStream struct {
	pb.AgentService_ChatClient
	sent       []*pb.ClientEvent
	halfClosed bool
}

func (r *recordingStream) Send(ev *pb.ClientEvent) error {
	if r.halfClosed {
		return status.Error(codes.Internal, "SendMsg called after CloseSend")
	}
	r.sent = append(r.sent, ev)
	return nil
}

func (r *recordingStream) CloseSend() error {
	r.halfClosed = true
	return nil
}

// TestWriteAfterHalfClose checks that an input written after Close half-closed the stream is not
// sent, and stays pending (to fail with the session's end) instead of failing with the stream's
// refusal.
func TestWriteAfterHalfClose(t *testing.T) {
	s := &Session{pending: map[string]*pendingInput{}, changed: make(chan struct{})}
	stream := &recordingStream{}
	before := &pb.ClientEvent{RequestId: "before"}
	after := &pb.ClientEvent{RequestId: "after"}
	s.pending["after"] = &pendingInput{ev: after, done: make(chan error, 1)}
	s.write(stream, before)
	s.halfClose(stream)
	s.write(stream, after)
	if len(stream.sent) != 1 || stream.sent[0] != before || !stream.halfClosed {
		t.Errorf("sent %v (half-closed: %v), want only the input written before the half-close", stream.sent, stream.halfClosed)
	}
	if p := s.pending["after"]; p == nil || len(p.done) != 0 {
		t.Errorf("the input written after the half-close got an outcome; want it still pending")
	}
}

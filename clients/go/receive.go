// A Session's events: received and de-duplicated across attaches, then read by its consumer.

package parkway

import (
	"context"
	"iter"

	"google.golang.org/protobuf/proto"

	pb "github.com/parkway-dev/parkway/clients/go/gen/parkway/v1"
)

type announcement struct {
	kind Kind
	call string
}

// receive reads stream until it fails, dispatching acknowledgements and queueing events.
func (s *Session) receive(stream pb.AgentService_ChatClient) error {
	for {
		msg, err := stream.Recv()
		if err != nil {
			return err
		}
		s.deliver(msg)
	}
}

// deliver handles one message from the server.
func (s *Session) deliver(msg *pb.ServerEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ack := msg.GetInputAck(); ack != nil {
		s.resolveLocked(ack.GetRequestId(), ackError(ack.GetStatus()))
		return
	}
	kind := kindOf(msg)
	ev := &Event{ServerEvent: msg, kind: kind}
	switch {
	case msg.GetSeq() > 0:
		if msg.GetSeq() <= s.lastSeq {
			return // already delivered on an earlier stream
		}
		s.lastSeq = msg.GetSeq()
	case isRequire(kind) && msg.GetReplayed() && !s.cfg.reannouncements:
		msg = s.unseenCalls(msg, kind)
		if msg == nil {
			return
		}
		ev = &Event{ServerEvent: msg, kind: kind}
	}
	if isRequire(kind) {
		for _, call := range ev.ToolCalls() {
			s.announced[announcement{kind, call.GetId()}] = true
			s.replyOf[call.GetId()] = msg.GetReplyId()
		}
	}
	s.queue = append(s.queue, ev)
	s.broadcast()
}

// unseenCalls reduces a re-announced REQUIRE_* event to the calls not delivered yet; nil when none
// is left. Called with mu held.
func (s *Session) unseenCalls(msg *pb.ServerEvent, kind Kind) *pb.ServerEvent {
	var calls []*ToolCall
	all := (&Event{ServerEvent: msg, kind: kind}).ToolCalls()
	for _, call := range all {
		if !s.announced[announcement{kind, call.GetId()}] {
			calls = append(calls, call)
		}
	}
	if len(calls) == 0 {
		return nil
	}
	if len(calls) == len(all) {
		return msg
	}
	out := proto.Clone(msg).(*pb.ServerEvent)
	switch kind {
	case KindRequireUserConfirm:
		out.GetRequireUserConfirm().ToolCalls = calls
	case KindRequireExternalExecution:
		out.GetRequireExternalExecution().ToolCalls = calls
	}
	return out
}

// Next returns the next event, waiting for it. It returns the session's terminal error once the
// queued events are read (ErrSessionClosed after Close, at once), or ctx's error.
func (s *Session) Next(ctx context.Context) (*Event, error) {
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return nil, ErrSessionClosed
		}
		if len(s.queue) > 0 {
			ev := s.queue[0]
			s.queue[0] = nil
			s.queue = s.queue[1:]
			s.mu.Unlock()
			return ev, nil
		}
		if s.err != nil {
			err := s.err
			s.mu.Unlock()
			return nil, err
		}
		changed := s.watch()
		s.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Events yields every event as it arrives, until ctx ends or the session fails; the error that
// stops it is yielded last (with a nil event).
func (s *Session) Events(ctx context.Context) iter.Seq2[*Event, error] {
	return func(yield func(*Event, error) bool) {
		for {
			ev, err := s.Next(ctx)
			if !yield(ev, err) || err != nil {
				return
			}
		}
	}
}

// UntilSettled yields the next events up to and including the next REPLY_END (the reply finished)
// or REPLY_PARKED (it waits for answers). An error (ctx's, or the session's) is yielded last.
func (s *Session) UntilSettled(ctx context.Context) iter.Seq2[*Event, error] {
	return func(yield func(*Event, error) bool) {
		for {
			ev, err := s.Next(ctx)
			if !yield(ev, err) || err != nil || ev.Settles() {
				return
			}
		}
	}
}

// Send sends a user message when the iteration starts and yields the reply's events until it
// finishes (REPLY_END) or parks (REPLY_PARKED). A refused message (e.g. FAILED_PRECONDITION while a
// reply is parked) is yielded as the only error; so is ctx's error or the session's.
func (s *Session) Send(ctx context.Context, text string) iter.Seq2[*Event, error] {
	return func(yield func(*Event, error) bool) {
		err := s.SendEvent(ctx, &pb.ClientEvent{
			Event: &pb.ClientEvent_UserMessage{UserMessage: &pb.UserMessage{Text: text}},
		})
		if err != nil {
			yield(nil, err)
			return
		}
		for ev, err := range s.UntilSettled(ctx) {
			if !yield(ev, err) {
				return
			}
		}
	}
}

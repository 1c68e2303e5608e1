// A Session's Chat stream: the attach handshake, attaching again after a break, waiting for one.

package parkway

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parkway-dev/parkway/clients/go/gen/parkway/v1"
)

const (
	reconnectMinDelay = 100 * time.Millisecond
	reconnectMaxDelay = 2 * time.Second
)

// open starts a Chat stream, sends attach and waits for the server's acknowledgement. ctx bounds the
// handshake; the stream itself lives on s.base until its cancel function is called.
func (s *Session) open(ctx context.Context, afterSeq uint64, waitForReady bool) (pb.AgentService_ChatClient, context.CancelFunc, error) {
	sctx, scancel := context.WithCancel(s.base)
	stop := context.AfterFunc(ctx, scancel)
	fail := func(err error) (pb.AgentService_ChatClient, context.CancelFunc, error) {
		stop()
		scancel()
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		if s.base.Err() != nil {
			return nil, nil, ErrSessionClosed
		}
		return nil, nil, err
	}
	stream, err := s.client.agent.Chat(sctx, grpc.WaitForReady(waitForReady))
	if err != nil {
		return fail(err)
	}
	requestID := newRequestID()
	hello := &pb.ClientEvent{
		SessionId: s.id,
		RequestId: requestID,
		Event:     &pb.ClientEvent_Attach{Attach: &pb.Attach{SessionId: s.id, AfterSeq: afterSeq}},
	}
	if err := stream.Send(hello); err != nil && !errors.Is(err, io.EOF) {
		return fail(err)
	}
	// The server answers attach before anything else; a refused attach ends the stream with its
	// status (unknown session, after_seq beyond the log) instead.
	msg, err := stream.Recv()
	if err != nil {
		return fail(err)
	}
	if !stop() {
		return fail(ctx.Err())
	}
	ack := msg.GetInputAck()
	if ack == nil || ack.GetRequestId() != requestID {
		return fail(status.Errorf(codes.Internal, "parkway: expected the attach acknowledgement, got %s", kindOf(msg)))
	}
	if err := ackError(ack.GetStatus()); err != nil {
		return fail(err)
	}
	return stream, scancel, nil
}

// install makes stream the session's current stream and sends it the inputs that are still waiting
// for an acknowledgement (lost with the previous stream), in order and with their request ids: the
// server applies an input once however often it receives it.
func (s *Session) install(stream pb.AgentService_ChatClient, cancel context.CancelFunc) {
	s.mu.Lock()
	s.stream, s.streamCancel = stream, cancel
	s.attachments++
	s.reattach = false
	resend := make([]*pendingInput, 0, len(s.pending))
	for _, p := range s.pending {
		resend = append(resend, p)
	}
	s.broadcast()
	s.mu.Unlock()
	slices.SortFunc(resend, func(a, b *pendingInput) int { return cmp.Compare(a.order, b.order) })
	for _, p := range resend {
		s.write(stream, p.ev)
	}
}

// run receives from the current stream and re-attaches when it breaks, until the session ends. A
// stream that ends after Close (the server's OK answer to the half-close, or any break) ends the
// session.
func (s *Session) run(stream pb.AgentService_ChatClient) {
	defer close(s.done)
	for {
		err := s.receive(stream)
		reattach, closed := s.detach()
		if closed || s.base.Err() != nil {
			s.finish(ErrSessionClosed)
			return
		}
		if !reattach && (!reconnectable(err) || s.cfg.reconnectWindow <= 0) {
			if errors.Is(err, io.EOF) {
				err = fmt.Errorf("parkway: the server ended the stream: %w", err)
			}
			s.finish(err)
			return
		}
		next, cancel, err := s.reconnect(reattach)
		if err != nil {
			s.finish(err)
			return
		}
		s.install(next, cancel)
		stream = next
	}
}

// detach forgets the broken stream (the inputs waiting for an acknowledgement stay pending, to be
// resent on the next stream); it reports whether Reconnect asked for the break, and whether Close
// was called.
func (s *Session) detach() (reattach, closed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.streamCancel != nil {
		s.streamCancel()
	}
	s.stream, s.streamCancel = nil, nil
	s.broadcast()
	return s.reattach, s.closed
}

// reconnectable reports whether a stream that ended with err should be attached again: UNAVAILABLE
// (a restart, a dropped connection), or RESOURCE_EXHAUSTED with reason STREAM_BACKLOG (the server
// dropped a stream that fell too far behind).
func reconnectable(err error) bool {
	st, ok := status.FromError(err)
	if !ok {
		return false
	}
	switch st.Code() {
	case codes.Unavailable:
		return true
	case codes.ResourceExhausted:
		for _, d := range st.Details() {
			if info, ok := d.(*errdetails.ErrorInfo); ok && info.GetReason() == "STREAM_BACKLOG" {
				return true
			}
		}
	}
	return false
}

// reconnect attaches a new stream after the last seq received, retrying UNAVAILABLE with a bounded
// backoff within the reconnect window (a reconnect the consumer asked for gets the same window);
// when the window passes it returns UNAVAILABLE naming the last failure.
func (s *Session) reconnect(immediate bool) (pb.AgentService_ChatClient, context.CancelFunc, error) {
	window := s.cfg.reconnectWindow
	if window <= 0 {
		window = DefaultReconnectWindow
	}
	ctx, cancel := context.WithTimeout(s.base, window)
	defer cancel()
	delay := reconnectMinDelay
	if immediate {
		delay = 0
	}
	var last error
	for {
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-ctx.Done():
			}
		}
		if s.base.Err() != nil {
			return nil, nil, ErrSessionClosed
		}
		if ctx.Err() != nil {
			return nil, nil, status.Errorf(codes.Unavailable, "parkway: could not attach session %s again within %s: %v", s.id, window, last)
		}
		stream, streamCancel, err := s.open(ctx, s.LastSeq(), true)
		if err == nil {
			return stream, streamCancel, nil
		}
		if errors.Is(err, context.DeadlineExceeded) && last != nil {
			err = last
		}
		if !errors.Is(err, context.DeadlineExceeded) && status.Code(err) != codes.Unavailable {
			return nil, nil, err
		}
		last = err
		delay = min(max(2*delay, reconnectMinDelay), reconnectMaxDelay)
	}
}

// finish records the session's terminal error, fails the inputs still waiting (whether the server
// applied them is unknown), and wakes everyone.
func (s *Session) finish(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
	}
	for id := range s.pending {
		s.resolveLocked(id, s.err)
	}
	s.broadcast()
}

// Reconnect closes the current stream and attaches a new one after the last seq received, as an
// automatic reconnect does: events are still delivered exactly once, and inputs waiting for an
// acknowledgement are sent again on the new stream. It returns once the new stream is attached, or
// with ctx's error when ctx ends first (a ctx already done leaves the stream alone). The current
// stream is cancelled, which resets it: each Reconnect counts against the server's limit on streams
// reset by a client (see [Session.Close]), past which the server closes the connection.
func (s *Session) Reconnect(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	if s.err != nil {
		err := s.err
		s.mu.Unlock()
		return err
	}
	before := s.attachments
	s.reattach = true
	if s.streamCancel != nil {
		s.streamCancel()
	}
	s.mu.Unlock()
	return s.waitAttached(ctx, before+1)
}

// WaitConnected blocks until the session has a stream attached (at once when it has), or returns
// the session's terminal error, or ctx's error.
func (s *Session) WaitConnected(ctx context.Context) error {
	return s.waitAttached(ctx, 0)
}

func (s *Session) waitAttached(ctx context.Context, atLeast int) error {
	for {
		s.mu.Lock()
		if s.err != nil {
			err := s.err
			s.mu.Unlock()
			return err
		}
		if s.stream != nil && s.attachments >= atLeast {
			s.mu.Unlock()
			return nil
		}
		changed := s.watch()
		s.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

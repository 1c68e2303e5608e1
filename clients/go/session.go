package parkway

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"
	"sync"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "github.com/parkway-dev/parkway/clients/go/gen/parkway/v1"
)

// DefaultReconnectWindow is how long a session keeps trying to attach again after its stream broke
// with UNAVAILABLE, unless [WithReconnectWindow] says otherwise.
const DefaultReconnectWindow = 30 * time.Second

const (
	reconnectMinDelay = 100 * time.Millisecond
	reconnectMaxDelay = 2 * time.Second
)

// AttachOption configures [Client.Attach].
type AttachOption func(*attachConfig)

type attachConfig struct {
	afterSeq        uint64
	reconnectWindow time.Duration
	reannouncements bool
}

// WithAfterSeq resumes from a seq the consumer has already seen: the server replays only the events
// after it. The default, 0, replays the session from its start.
func WithAfterSeq(seq uint64) AttachOption {
	return func(c *attachConfig) { c.afterSeq = seq }
}

// WithReconnectWindow bounds how long the session tries to attach again after its stream broke with
// UNAVAILABLE; zero or less turns automatic reconnection off (the break then ends the session).
func WithReconnectWindow(d time.Duration) AttachOption {
	return func(c *attachConfig) { c.reconnectWindow = d }
}

// WithReannouncements delivers every REQUIRE_* event that the server re-announces after an attach
// (seq 0, replayed=true), including calls this Session already delivered. By default such
// re-announcements are reduced to the calls the consumer has not seen yet (see the package
// documentation).
func WithReannouncements() AttachOption {
	return func(c *attachConfig) { c.reannouncements = true }
}

// Session is a Chat stream attached to one Parkway session. Events are read by one consumer at a
// time (Next, Events, UntilSettled, Send); inputs may be sent from any goroutine. The stream
// reconnects by itself when it breaks with UNAVAILABLE. Close ends it.
type Session struct {
	client *Client
	id     string
	cfg    attachConfig
	base   context.Context // stream contexts derive from it; cancelled by Close
	cancel context.CancelFunc
	done   chan struct{} // closed when run returns

	sendMu     sync.Mutex // grpc-go allows one concurrent SendMsg (or CloseSend) per stream
	sendClosed bool       // guarded by sendMu: Close half-closed the stream, nothing more is sent

	closeOnce sync.Once

	mu           sync.Mutex
	stream       pb.AgentService_ChatClient // nil while reconnecting
	streamCancel context.CancelFunc
	attachments  int                      // streams attached so far
	pending      map[string]*pendingInput // inputs not acknowledged yet, by request_id
	inputs       uint64                   // inputs sent so far, to resend in order
	queue        []*Event                 // delivered to the consumer by Next
	changed      chan struct{}            // closed (and replaced) when queue, stream or err changes
	watched      bool                     // someone holds changed and waits for it to close
	lastSeq      uint64                   // seq of the last logged event received
	announced    map[announcement]bool    // REQUIRE_* calls delivered to the consumer
	replyOf      map[string]string        // tool call id → reply id, from REQUIRE_* events
	reattach     bool                     // Reconnect asked for a new stream
	err          error                    // terminal error, after which no stream is attached
	closed       bool
}

// pendingInput is an input waiting for its acknowledgement.
type pendingInput struct {
	ev    *pb.ClientEvent
	done  chan error // receives the outcome once
	order uint64
}

type announcement struct {
	kind Kind
	call string
}

// Attach opens a Chat stream attached to the session sessionID and returns once the server accepted
// the attach. The server replays the stored events after [WithAfterSeq] (all of them by default),
// re-announces what a parked reply waits for, then streams live events. ctx bounds the attach
// handshake only; the session lives until [Session.Close] (values of ctx reach every stream).
func (c *Client) Attach(ctx context.Context, sessionID string, opts ...AttachOption) (*Session, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cfg := attachConfig{reconnectWindow: DefaultReconnectWindow}
	for _, opt := range opts {
		opt(&cfg)
	}
	base, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s := &Session{
		client:    c,
		id:        sessionID,
		cfg:       cfg,
		base:      base,
		cancel:    cancel,
		done:      make(chan struct{}),
		pending:   map[string]*pendingInput{},
		changed:   make(chan struct{}),
		lastSeq:   cfg.afterSeq,
		announced: map[announcement]bool{},
		replyOf:   map[string]string{},
	}
	stream, streamCancel, err := s.open(ctx, cfg.afterSeq, false)
	if err != nil {
		cancel()
		return nil, err
	}
	s.install(stream, streamCancel)
	go s.run(stream)
	return s, nil
}

// ID returns the session's id.
func (s *Session) ID() string { return s.id }

// LastSeq returns the seq of the last logged event the session received (or the after_seq it was
// attached with, when none has arrived yet): the point to resume from.
func (s *Session) LastSeq() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastSeq
}

// Attachments returns how many times a stream was attached: 1 after Attach, one more per reconnect.
func (s *Session) Attachments() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.attachments
}

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

// write sends ev on stream. A broken stream (io.EOF) is left to the run loop, which attaches again
// and resends; any other error cannot be retried and becomes the input's outcome. Once Close has
// half-closed the stream nothing is sent: the input stays pending, and fails with ErrSessionClosed
// when the session ends.
func (s *Session) write(stream pb.AgentService_ChatClient, ev *pb.ClientEvent) {
	s.sendMu.Lock()
	if s.sendClosed {
		s.sendMu.Unlock()
		return
	}
	err := stream.Send(ev)
	s.sendMu.Unlock()
	if err != nil && !errors.Is(err, io.EOF) {
		s.resolve(ev.GetRequestId(), err)
	}
}

// resolve hands an input its outcome, once.
func (s *Session) resolve(requestID string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resolveLocked(requestID, err)
}

func (s *Session) resolveLocked(requestID string, err error) {
	if p, ok := s.pending[requestID]; ok {
		delete(s.pending, requestID)
		p.done <- err
	}
}

// broadcast wakes everyone waiting for a change. Called with mu held. With nobody waiting (the
// consumer busy with earlier events) there is nothing to wake, and no new channel is made.
func (s *Session) broadcast() {
	if !s.watched {
		return
	}
	close(s.changed)
	s.changed = make(chan struct{})
	s.watched = false
}

// watch returns the channel that the next change closes. Called with mu held.
func (s *Session) watch() <-chan struct{} {
	s.watched = true
	return s.changed
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

// SendEvent sends one raw input (user_message, user_confirm_result, external_execution_result or
// user_interrupt) and waits for the server's acknowledgement: nil when applied, the refusal as a
// gRPC status error otherwise. Empty session_id and request_id are filled in; ev is not modified.
// While the session is reconnecting the input waits for the new stream; an input whose
// acknowledgement was lost with a broken stream is sent again, with the same request_id, on the next
// one (the server applies a request_id once). If the session fails meanwhile, SendEvent returns its
// error and the input may or may not have been applied; likewise when ctx ends first, even while
// the input is still being written (a server that stopped reading). A ctx already done sends
// nothing.
func (s *Session) SendEvent(ctx context.Context, ev *pb.ClientEvent) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if ev.GetAttach() != nil {
		return status.Error(codes.InvalidArgument, "parkway: attach is sent by Attach and Reconnect, not SendEvent")
	}
	ev = proto.Clone(ev).(*pb.ClientEvent)
	if ev.RequestId == "" {
		ev.RequestId = newRequestID()
	}
	if ev.SessionId == "" {
		ev.SessionId = s.id
	}
	p := &pendingInput{ev: ev, done: make(chan error, 1)}
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return ErrSessionClosed
	case s.err != nil:
		err := s.err
		s.mu.Unlock()
		return err
	case s.pending[ev.RequestId] != nil:
		s.mu.Unlock()
		return status.Errorf(codes.InvalidArgument, "parkway: an input with request_id %q is already waiting for its acknowledgement", ev.RequestId)
	}
	s.inputs++
	p.order = s.inputs
	s.pending[ev.RequestId] = p
	stream := s.stream // nil while reconnecting: install sends the input on the next stream
	s.mu.Unlock()
	if stream != nil {
		// Sending blocks while the stream's flow-control window is full (a server that stopped
		// reading); waiting on its own goroutine keeps ctx in charge. The send ends with the stream.
		go s.write(stream, ev)
	}
	select {
	case err := <-p.done:
		return err
	case <-ctx.Done():
		s.forget(ev.RequestId)
		return ctx.Err()
	}
}

// forget stops waiting for an input's acknowledgement; it will not be resent.
func (s *Session) forget(requestID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pending, requestID)
}

// replyID returns the reply a delivered tool call belongs to ("" when unknown: the server then
// takes the session's current reply).
func (s *Session) replyID(callID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.replyOf[callID]
}

package parkway

import (
	"context"
	"sync"
	"time"

	pb "github.com/parkway-dev/parkway/clients/go/gen/parkway/v1"
)

// DefaultReconnectWindow is how long a session keeps trying to attach again after its stream broke
// with UNAVAILABLE, unless [WithReconnectWindow] says otherwise.
const DefaultReconnectWindow = 30 * time.Second

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

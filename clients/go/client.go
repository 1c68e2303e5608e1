package parkway

import (
	"context"
	"crypto/tls"
	"errors"
	"iter"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"

	pb "github.com/parkway-dev/parkway/clients/go/gen/parkway/v1"
)

// Aliases of the generated types that the client's API takes and returns most often.
type (
	// ToolCall is a tool call made by the model, as carried by REQUIRE_* events and by
	// [pb.Session.PendingToolCalls].
	ToolCall = pb.ToolCallBlock
	// Rule is a permission rule, e.g. a suggested rule accepted with a confirmation.
	Rule = pb.PermissionRule
	// AskUserAnswer is the answer to one question of an AskUser call.
	AskUserAnswer = pb.AskUserAnswer
)

// Option configures [NewClient].
type Option func(*clientConfig)

type clientConfig struct {
	token       string
	creds       credentials.TransportCredentials
	timeout     time.Duration
	addressFunc func(context.Context) (string, error)
	keepalive   *keepalive.ClientParameters
	noKeepalive bool
	dialOptions []grpc.DialOption
}

// The client's default keepalive: while a call is open (an attached session's stream), it pings
// the server every DefaultKeepaliveTime and counts the connection dead when an answer takes longer
// than DefaultKeepaliveTimeout. A ping every 30 s keeps a quiet stream's connection inside the idle
// timeouts of load balancers, NATs and firewalls (60 s and more is common); a server that stops
// answering is noticed within 50 s, and attached sessions re-attach. The Parkway server accepts
// client pings at any interval.
const (
	DefaultKeepaliveTime    = 30 * time.Second
	DefaultKeepaliveTimeout = 20 * time.Second
)

// WithKeepalive sets the client's keepalive pings instead of the defaults (see
// [DefaultKeepaliveTime]); gRPC raises a Time under 10 s to 10 s.
func WithKeepalive(params keepalive.ClientParameters) Option {
	return func(c *clientConfig) { c.keepalive = &params; c.noKeepalive = false }
}

// WithoutKeepalive sends no keepalive pings: a quiet stream may then be cut by a load balancer's
// idle timeout, and a dead server is noticed only when the operating system gives up on the
// connection.
func WithoutKeepalive() Option {
	return func(c *clientConfig) { c.keepalive = nil; c.noKeepalive = true }
}

// keepaliveParams returns the keepalive the client dials with, and false when it sends no pings.
func (c *clientConfig) keepaliveParams() (keepalive.ClientParameters, bool) {
	if c.noKeepalive {
		return keepalive.ClientParameters{}, false
	}
	if c.keepalive != nil {
		return *c.keepalive, true
	}
	return keepalive.ClientParameters{Time: DefaultKeepaliveTime, Timeout: DefaultKeepaliveTimeout}, true
}

// WithToken sends `authorization: Bearer <token>` with every call. Without [WithTransportCredentials]
// the token travels in plaintext, which is only acceptable on loopback.
func WithToken(token string) Option {
	return func(c *clientConfig) { c.token = token }
}

// WithTransportCredentials sets the channel's transport credentials (TLS, mTLS); the default is
// plaintext, for a server on loopback.
func WithTransportCredentials(creds credentials.TransportCredentials) Option {
	return func(c *clientConfig) { c.creds = creds }
}

// WithTLS connects over TLS with cfg: RootCAs to trust the server's CA (nil uses the system's roots),
// Certificates for a server that requires client certificates (mTLS). cfg may be nil for TLS with
// the system's roots. The server name checked is the host of the address given to [NewClient]
// unless cfg.ServerName sets one. It is a shorthand for
// WithTransportCredentials(credentials.NewTLS(cfg)).
func WithTLS(cfg *tls.Config) Option {
	return WithTransportCredentials(credentials.NewTLS(cfg))
}

// WithTimeout sets the deadline of unary calls whose context has none. Zero (the default) adds no
// deadline. It does not apply to Chat streams.
func WithTimeout(d time.Duration) Option {
	return func(c *clientConfig) { c.timeout = d }
}

// WithAddressFunc makes every new connection dial the address that f returns at that moment instead
// of the address given to [NewClient] (which is then only a label). Use it when the server may come
// back on another address, e.g. after a restart on a fresh port: sessions reconnect to wherever f
// points.
func WithAddressFunc(f func(ctx context.Context) (string, error)) Option {
	return func(c *clientConfig) { c.addressFunc = f }
}

// WithDialOptions appends raw gRPC dial options (interceptors, keepalive, a custom backoff, …);
// they are applied after the client's own, so they win.
func WithDialOptions(opts ...grpc.DialOption) Option {
	return func(c *clientConfig) { c.dialOptions = append(c.dialOptions, opts...) }
}

// userAgent names this client in the user-agent header of every call, ahead of grpc-go's own.
const userAgent = "parkway-go/" + Version

// Client is a connection to a Parkway server: sessions, replies, agents, and the generated stubs.
// It is safe for concurrent use.
type Client struct {
	conn    *grpc.ClientConn
	agent   pb.AgentServiceClient
	perms   pb.PermissionServiceClient
	audit   pb.AuditServiceClient
	timeout time.Duration
}

// NewClient creates a client for the Parkway server at addr (HOST:PORT). Like grpc.NewClient it does
// not connect: the first call connects, and the connection is made again after it breaks, with a
// backoff of at most 3 s between attempts. It fails only when addr or the options are invalid; a
// server that cannot be reached shows as UNAVAILABLE from the calls. Close releases the connection.
// Calls send the user agent "parkway-go/" + [Version].
func NewClient(addr string, opts ...Option) (*Client, error) {
	cfg := clientConfig{}
	for _, opt := range opts {
		opt(&cfg)
	}
	creds := cfg.creds
	if creds == nil {
		creds = insecure.NewCredentials()
	}
	dialOpts := []grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		grpc.WithUserAgent(userAgent),
		// Interactive clients want a restarted server back within seconds, not gRPC's default of
		// up to two minutes between connection attempts.
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff: backoff.Config{
				BaseDelay:  200 * time.Millisecond,
				Multiplier: 1.6,
				Jitter:     0.2,
				MaxDelay:   3 * time.Second,
			},
			MinConnectTimeout: 5 * time.Second,
		}),
	}
	if params, ok := cfg.keepaliveParams(); ok {
		dialOpts = append(dialOpts, grpc.WithKeepaliveParams(params))
	}
	if cfg.token != "" {
		dialOpts = append(dialOpts, grpc.WithPerRPCCredentials(bearer{token: cfg.token}))
	}
	target := addr
	if cfg.addressFunc != nil {
		// passthrough hands the target to the dialer untouched; the dialer asks addressFunc.
		target = "passthrough:///" + addr
		f := cfg.addressFunc
		dialOpts = append(dialOpts, grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			current, err := f(ctx)
			if err != nil {
				return nil, err
			}
			var d net.Dialer
			return d.DialContext(ctx, "tcp", current)
		}))
	}
	dialOpts = append(dialOpts, cfg.dialOptions...)
	conn, err := grpc.NewClient(target, dialOpts...)
	if err != nil {
		return nil, err
	}
	return &Client{
		conn:    conn,
		agent:   pb.NewAgentServiceClient(conn),
		perms:   pb.NewPermissionServiceClient(conn),
		audit:   pb.NewAuditServiceClient(conn),
		timeout: cfg.timeout,
	}, nil
}

// Close closes the connection; attached sessions end with an error.
func (c *Client) Close() error { return c.conn.Close() }

// Conn returns the underlying gRPC connection, e.g. for the health service.
func (c *Client) Conn() *grpc.ClientConn { return c.conn }

// AgentService returns the generated AgentService stub on the client's connection.
func (c *Client) AgentService() pb.AgentServiceClient { return c.agent }

// PermissionService returns the generated PermissionService stub on the client's connection.
func (c *Client) PermissionService() pb.PermissionServiceClient { return c.perms }

// AuditService returns the generated AuditService stub on the client's connection.
func (c *Client) AuditService() pb.AuditServiceClient { return c.audit }

// unaryContext applies the default timeout to a context without a deadline.
func (c *Client) unaryContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok || c.timeout <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, c.timeout)
}

// SessionOption configures [Client.CreateSession].
type SessionOption func(*pb.CreateSessionRequest)

// WithExternalTools declares tools that this client executes itself, added to the agent's tools for
// the session.
func WithExternalTools(tools ...*pb.ExternalTool) SessionOption {
	return func(r *pb.CreateSessionRequest) { r.ExternalTools = append(r.ExternalTools, tools...) }
}

// WithPermissionMode sets the session's permission mode instead of the agent's.
func WithPermissionMode(mode pb.PermissionMode) SessionOption {
	return func(r *pb.CreateSessionRequest) { r.PermissionMode = mode }
}

// WithWorkingDirectories confines the session to directories inside the agent's own. Only an agent
// that shares its working directories (shareWorkingDirectories) accepts them; any other gives each
// session a directory of its own and refuses this option with INVALID_ARGUMENT.
func WithWorkingDirectories(dirs ...string) SessionOption {
	return func(r *pb.CreateSessionRequest) { r.WorkingDirectories = append(r.WorkingDirectories, dirs...) }
}

// CreateSession creates a session of the agent agentID.
func (c *Client) CreateSession(ctx context.Context, agentID string, opts ...SessionOption) (*pb.Session, error) {
	req := &pb.CreateSessionRequest{AgentId: agentID}
	for _, opt := range opts {
		opt(req)
	}
	ctx, cancel := c.unaryContext(ctx)
	defer cancel()
	res, err := c.agent.CreateSession(ctx, req)
	if err != nil {
		return nil, err
	}
	return res.GetSession(), nil
}

// GetSession returns a session's status, pending tool calls, last seq and token usage (GetUsage,
// summed over its replies).
func (c *Client) GetSession(ctx context.Context, sessionID string) (*pb.Session, error) {
	ctx, cancel := c.unaryContext(ctx)
	defer cancel()
	res, err := c.agent.GetSession(ctx, &pb.GetSessionRequest{SessionId: sessionID})
	if err != nil {
		return nil, err
	}
	return res.GetSession(), nil
}

// ListSessions returns one page of sessions, newest first; req may filter by status and agent and
// carries the page token (nil lists the first page of all sessions). See [Client.Sessions] to
// iterate over every page.
func (c *Client) ListSessions(ctx context.Context, req *pb.ListSessionsRequest) (*pb.ListSessionsResponse, error) {
	if req == nil {
		req = &pb.ListSessionsRequest{}
	}
	ctx, cancel := c.unaryContext(ctx)
	defer cancel()
	return c.agent.ListSessions(ctx, req)
}

// Sessions yields every session matching status and agentID (zero values match all), fetching page
// after page; it stops at the first error, which it yields.
func (c *Client) Sessions(ctx context.Context, status pb.SessionStatus, agentID string) iter.Seq2[*pb.Session, error] {
	return func(yield func(*pb.Session, error) bool) {
		req := &pb.ListSessionsRequest{Status: status, AgentId: agentID}
		for {
			page, err := c.ListSessions(ctx, req)
			if err != nil {
				yield(nil, err)
				return
			}
			for _, s := range page.GetSessions() {
				if !yield(s, nil) {
					return
				}
			}
			if page.GetNextPageToken() == "" {
				return
			}
			req.PageToken = page.GetNextPageToken()
		}
	}
}

// DeleteSession deletes a session, its events and its session-scoped rules.
func (c *Client) DeleteSession(ctx context.Context, sessionID string) error {
	ctx, cancel := c.unaryContext(ctx)
	defer cancel()
	_, err := c.agent.DeleteSession(ctx, &pb.DeleteSessionRequest{SessionId: sessionID})
	return err
}

// ListAgents returns the configured agents.
func (c *Client) ListAgents(ctx context.Context) ([]*pb.Agent, error) {
	ctx, cancel := c.unaryContext(ctx)
	defer cancel()
	res, err := c.agent.ListAgents(ctx, &pb.ListAgentsRequest{})
	if err != nil {
		return nil, err
	}
	return res.GetAgents(), nil
}

// Reply is the unary convenience: it applies one input and waits until the reply finishes or parks.
// The response holds the final message (finished_reason set), or the waiting notice (unset) and the
// pending tool calls. An empty request_id is filled with a random one.
func (c *Client) Reply(ctx context.Context, req *pb.ReplyRequest) (*pb.ReplyResponse, error) {
	if req == nil {
		return nil, errors.New("parkway: Reply needs a request")
	}
	if req.GetRequestId() == "" {
		req = cloneReplyRequest(req)
		req.RequestId = newRequestID()
	}
	ctx, cancel := c.unaryContext(ctx)
	defer cancel()
	return c.agent.Reply(ctx, req)
}

// bearer is per-RPC credentials sending a bearer token. It does not insist on TLS, like the
// TypeScript and Python clients: a single-tenant server on loopback needs none (see WithToken).
type bearer struct {
	token string
}

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + b.token}, nil
}

func (b bearer) RequireTransportSecurity() bool { return false }

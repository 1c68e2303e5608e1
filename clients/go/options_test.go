package parkway_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	parkway "github.com/parkway-dev/parkway/clients/go"
	pb "github.com/parkway-dev/parkway/clients/go/gen/parkway/v1"
)

// fakeAgents is an in-process AgentService that records what the client sent (the server has no
// token authentication yet, so the client's side is checked here).
type fakeAgents struct {
	pb.UnimplementedAgentServiceServer
	auth        chan string
	userAgent   chan string
	hasDeadline chan bool
}

func (f *fakeAgents) ListAgents(ctx context.Context, _ *pb.ListAgentsRequest) (*pb.ListAgentsResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	f.auth <- firstOrEmpty(md.Get("authorization"))
	f.userAgent <- firstOrEmpty(md.Get("user-agent"))
	_, ok := ctx.Deadline()
	f.hasDeadline <- ok
	return &pb.ListAgentsResponse{Agents: []*pb.Agent{{Id: "fake"}}}, nil
}

func (f *fakeAgents) GetSession(context.Context, *pb.GetSessionRequest) (*pb.GetSessionResponse, error) {
	st, _ := status.New(codes.InvalidArgument, "bad id").WithDetails(&errdetails.BadRequest{
		FieldViolations: []*errdetails.BadRequest_FieldViolation{{Field: "session_id", Description: "is malformed"}},
	})
	return nil, st.Err()
}

func firstOrEmpty(values []string) string {
	if len(values) == 0 {
		return ""
	}
	return values[0]
}

// TestClientOptions checks WithToken, WithTimeout, the user agent, and that unary errors arrive as the status errors
// the server sent, details included.
func TestClientOptions(t *testing.T) {
	t.Parallel()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fake := &fakeAgents{auth: make(chan string, 4), userAgent: make(chan string, 4), hasDeadline: make(chan bool, 4)}
	srv := grpc.NewServer()
	pb.RegisterAgentServiceServer(srv, fake)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	ctx := testContext(t)

	tests := []struct {
		name         string
		opts         []parkway.Option
		wantAuth     string
		wantDeadline bool
	}{
		{name: "defaults", wantAuth: "", wantDeadline: true}, // testContext has a deadline
		{name: "token", opts: []parkway.Option{parkway.WithToken("s3cret")}, wantAuth: "Bearer s3cret", wantDeadline: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client, err := parkway.NewClient(lis.Addr().String(), tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer client.Close()
			agents, err := client.ListAgents(ctx)
			if err != nil || len(agents) != 1 {
				t.Fatalf("ListAgents = %v, %v", agents, err)
			}
			if got := <-fake.auth; got != tc.wantAuth {
				t.Errorf("authorization = %q, want %q", got, tc.wantAuth)
			}
			// grpc-go appends its own name to the client's.
			if got, want := <-fake.userAgent, "parkway-go/"+parkway.Version+" grpc-go/"; !strings.HasPrefix(got, want) {
				t.Errorf("user-agent = %q, want it to start with %q", got, want)
			}
			if got := <-fake.hasDeadline; got != tc.wantDeadline {
				t.Errorf("deadline set = %t, want %t", got, tc.wantDeadline)
			}
		})
	}

	t.Run("WithTimeout adds a deadline", func(t *testing.T) {
		client, err := parkway.NewClient(lis.Addr().String(), parkway.WithTimeout(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		defer client.Close()
		if _, err := client.ListAgents(context.Background()); err != nil {
			t.Fatal(err)
		}
		<-fake.auth
		<-fake.userAgent
		if !<-fake.hasDeadline {
			t.Errorf("no deadline reached the server")
		}
	})

	t.Run("unary errors are status errors with details", func(t *testing.T) {
		client, err := parkway.NewClient(lis.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer client.Close()
		_, err = client.GetSession(ctx, "x")
		if status.Code(err) != codes.InvalidArgument || status.Convert(err).Message() != "bad id" {
			t.Fatalf("GetSession = %v, want INVALID_ARGUMENT bad id", err)
		}
		v := parkway.FieldViolations(err)
		if len(v) != 1 || v[0].GetField() != "session_id" {
			t.Errorf("FieldViolations = %v, want session_id", v)
		}
	})
}

package parkway_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection/grpc_reflection_v1"

	"github.com/parkway-dev/parkway/clients/go/internal/testserver"
)

// rpcTimeout bounds each call to the server.
const rpcTimeout = 10 * time.Second

// TestHealth checks that grpc.health.v1.Health reports SERVING for the server as a whole and for
// parkway.v1.AgentService.
func TestHealth(t *testing.T) {
	t.Parallel()
	conn := testserver.NewConn(t, testserver.Start(t))
	client := grpc_health_v1.NewHealthClient(conn)

	tests := []struct {
		name    string
		service string
	}{
		{name: "server", service: ""},
		{name: "AgentService", service: "parkway.v1.AgentService"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), rpcTimeout)
			defer cancel()
			resp, err := client.Check(ctx, &grpc_health_v1.HealthCheckRequest{Service: tc.service})
			if err != nil {
				t.Fatalf("Check(%q): %v", tc.service, err)
			}
			if got, want := resp.GetStatus(), grpc_health_v1.HealthCheckResponse_SERVING; got != want {
				t.Errorf("Check(%q) status = %v, want %v", tc.service, got, want)
			}
		})
	}
}

// TestReflection checks that server reflection (grpc.reflection.v1) lists the Parkway services.
func TestReflection(t *testing.T) {
	t.Parallel()
	conn := testserver.NewConn(t, testserver.Start(t))
	client := grpc_reflection_v1.NewServerReflectionClient(conn)

	ctx, cancel := context.WithTimeout(t.Context(), rpcTimeout)
	defer cancel()
	stream, err := client.ServerReflectionInfo(ctx)
	if err != nil {
		t.Fatalf("ServerReflectionInfo: %v", err)
	}
	req := &grpc_reflection_v1.ServerReflectionRequest{
		MessageRequest: &grpc_reflection_v1.ServerReflectionRequest_ListServices{ListServices: "*"},
	}
	if err := stream.Send(req); err != nil {
		t.Fatalf("sending list_services: %v", err)
	}
	resp, err := stream.Recv()
	if err != nil {
		t.Fatalf("receiving list_services: %v", err)
	}
	if err := stream.CloseSend(); err != nil {
		t.Fatalf("CloseSend: %v", err)
	}
	if e := resp.GetErrorResponse(); e != nil {
		t.Fatalf("list_services error: code %d: %s", e.GetErrorCode(), e.GetErrorMessage())
	}
	var listed []string
	for _, s := range resp.GetListServicesResponse().GetService() {
		listed = append(listed, s.GetName())
	}

	for _, want := range []string{"parkway.v1.AgentService", "parkway.v1.PermissionService"} {
		if !slices.Contains(listed, want) {
			t.Errorf("list_services = %v, missing %s", listed, want)
		}
	}
}

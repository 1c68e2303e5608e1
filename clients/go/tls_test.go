package parkway_test

import (
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	parkway "github.com/parkway-dev/parkway/clients/go"
	"github.com/parkway-dev/parkway/clients/go/internal/testserver"
)

// TestTLS checks a server configured with tls.cert and tls.key: a client given WithTLS and the CA
// gets a reply and health SERVING; a plaintext client and one that trusts another CA are refused
// with UNAVAILABLE.
func TestTLS(t *testing.T) {
	t.Parallel()
	certs := testserver.MakeCerts(t)
	config := map[string]any{"tls": map[string]any{"cert": certs.ServerCert, "key": certs.ServerKey}}
	env := startEnvConfig(t, []map[string]any{{"id": "assistant"}}, config,
		parkway.WithTLS(testserver.ClientTLS(t, certs.CA, "", "")))

	checkServes(t, env)
	checkRefused(t, env.server.Addr(), []refusal{
		{name: "plaintext"},
		{name: "trusts another CA", opts: []parkway.Option{
			parkway.WithTLS(testserver.ClientTLS(t, certs.OtherCA, "", "")),
		}},
	})
}

// TestMutualTLS checks a server that also has tls.clientCa: a client presenting a certificate that
// CA signed gets a reply and health SERVING; one without a certificate, one whose certificate another
// CA signed, and a plaintext one are refused with UNAVAILABLE.
func TestMutualTLS(t *testing.T) {
	t.Parallel()
	certs := testserver.MakeCerts(t)
	config := map[string]any{"tls": map[string]any{
		"cert":              certs.ServerCert,
		"key":               certs.ServerKey,
		"clientCa":          certs.CA,
		"requireClientCert": true,
	}}
	env := startEnvConfig(t, []map[string]any{{"id": "assistant"}}, config,
		parkway.WithTLS(testserver.ClientTLS(t, certs.CA, certs.ClientCert, certs.ClientKey)))

	checkServes(t, env)
	checkRefused(t, env.server.Addr(), []refusal{
		{name: "no client certificate", opts: []parkway.Option{
			parkway.WithTLS(testserver.ClientTLS(t, certs.CA, "", "")),
		}},
		{name: "certificate of another CA", opts: []parkway.Option{
			parkway.WithTLS(testserver.ClientTLS(t, certs.CA, certs.OtherClientCert, certs.OtherClientKey)),
		}},
		{name: "plaintext"},
	})
}

// checkServes has env's client converse with the scripted model and check health over its
// connection.
func checkServes(t *testing.T, env *testEnv) {
	t.Helper()
	env.play(t, `{"turns": [{"text": "Hello over TLS."}]}`)
	ctx := testContext(t)

	sess := env.attachNew(ctx, t, "assistant")
	if got := text(collect(t, sess.Send(ctx, "hi"))); got != "Hello over TLS." {
		t.Errorf("answer = %q, want %q", got, "Hello over TLS.")
	}
	resp, err := grpc_health_v1.NewHealthClient(env.client.Conn()).Check(ctx, &grpc_health_v1.HealthCheckRequest{})
	if err != nil {
		t.Fatalf("health Check: %v", err)
	}
	if got := resp.GetStatus(); got != grpc_health_v1.HealthCheckResponse_SERVING {
		t.Errorf("health = %v, want SERVING", got)
	}
}

// refusal is a client the server must refuse: NewClient's options (none = plaintext).
type refusal struct {
	name string
	opts []parkway.Option
}

// checkRefused connects to addr with each refusal's options and expects ListAgents to fail with
// UNAVAILABLE.
func checkRefused(t *testing.T, addr string, cases []refusal) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			opts := append([]parkway.Option{parkway.WithTimeout(rpcTimeout)}, tc.opts...)
			client, err := parkway.NewClient(addr, opts...)
			if err != nil {
				t.Fatalf("NewClient: %v", err)
			}
			defer client.Close()
			if _, err := client.ListAgents(ctx); status.Code(err) != codes.Unavailable {
				t.Errorf("ListAgents = %v, want UNAVAILABLE", err)
			}
		})
	}
}

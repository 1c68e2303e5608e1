package parkway_test

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	parkway "github.com/parkway-dev/parkway/clients/go"
)

// TestTenants checks WithToken against a server with two tenants: the token authenticates unary
// calls and Chat streams, and another tenant's sessions are NOT_FOUND.
func TestTenants(t *testing.T) {
	t.Parallel()
	digest := func(token string) string {
		sum := sha256.Sum256([]byte(token))
		return hex.EncodeToString(sum[:])
	}
	tenants := []map[string]any{
		{"id": "acme", "tokens": []map[string]any{{"name": "ci", "sha256": digest("acme-token")}}},
		{"id": "globex", "tokens": []map[string]any{{"name": "ci", "sha256": digest("globex-token")}}},
	}
	env := startEnvConfig(t, []map[string]any{{"id": "assistant"}}, map[string]any{"tenants": tenants},
		parkway.WithToken("acme-token"))
	env.play(t, `{"turns": [{"text": "Hello, acme."}]}`)
	ctx := testContext(t)

	sess := env.attachNew(ctx, t, "assistant")
	if got := text(collect(t, sess.Send(ctx, "hi"))); got != "Hello, acme." {
		t.Errorf("answer = %q", got)
	}

	dial := func(opts ...parkway.Option) *parkway.Client {
		c, err := parkway.NewClient(env.server.Addr(), append([]parkway.Option{parkway.WithTimeout(rpcTimeout)}, opts...)...)
		if err != nil {
			t.Fatalf("NewClient: %v", err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	globex := dial(parkway.WithToken("globex-token"))
	if _, err := globex.GetSession(ctx, sess.ID()); status.Code(err) != codes.NotFound {
		t.Errorf("another tenant's GetSession = %v, want NOT_FOUND", err)
	}
	if _, err := globex.Attach(ctx, sess.ID()); status.Code(err) != codes.NotFound {
		t.Errorf("another tenant's Attach = %v, want NOT_FOUND", err)
	}
	for name, c := range map[string]*parkway.Client{"no token": dial(), "unknown token": dial(parkway.WithToken("nope"))} {
		if _, err := c.ListAgents(ctx); status.Code(err) != codes.Unauthenticated {
			t.Errorf("%s: ListAgents = %v, want UNAUTHENTICATED", name, err)
		}
	}
}

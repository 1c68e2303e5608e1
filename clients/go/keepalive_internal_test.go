package parkway

import (
	"testing"
	"time"

	"google.golang.org/grpc/keepalive"
)

func clientConfigOf(opts ...Option) clientConfig {
	cfg := clientConfig{}
	for _, opt := range opts {
		opt(&cfg)
	}
	return cfg
}

// TestKeepaliveDefaults checks that NewClient sends keepalive pings by default (30 s, 20 s timeout,
// only while a call is open), that WithKeepalive replaces them and WithoutKeepalive turns them off.
func TestKeepaliveDefaults(t *testing.T) {
	t.Parallel()
	cfg := clientConfigOf()
	got, ok := cfg.keepaliveParams()
	want := keepalive.ClientParameters{Time: 30 * time.Second, Timeout: 20 * time.Second}
	if !ok || got != want {
		t.Errorf("default keepalive = %+v, %v; want %+v, true", got, ok, want)
	}

	custom := keepalive.ClientParameters{Time: 15 * time.Second, Timeout: 5 * time.Second, PermitWithoutStream: true}
	cfg = clientConfigOf(WithKeepalive(custom))
	if got, ok := cfg.keepaliveParams(); !ok || got != custom {
		t.Errorf("WithKeepalive: keepalive = %+v, %v; want %+v, true", got, ok, custom)
	}

	cfg = clientConfigOf(WithoutKeepalive())
	if _, ok := cfg.keepaliveParams(); ok {
		t.Error("WithoutKeepalive: the client still sends keepalive pings")
	}
	cfg = clientConfigOf(WithoutKeepalive(), WithKeepalive(custom))
	if got, ok := cfg.keepaliveParams(); !ok || got != custom {
		t.Errorf("WithoutKeepalive then WithKeepalive: keepalive = %+v, %v; want %+v, true", got, ok, custom)
	}
}

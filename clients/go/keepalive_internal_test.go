package parkway

import (
	"testing"
	"time"

	"google.golang.org/grpc/keepalive"
)

func dialConfigOf(opts ...Option) dialConfig {
	cfg := dialConfig{}
	for _, opt := range opts {
		opt(&cfg)
	}
	return cfg
}

// TestKeepaliveDefaults checks that Dial sends keepalive pings by default (30 s, 20 s timeout,
// only while a call is open), that WithKeepalive replaces them and WithoutKeepalive turns them off.
func TestKeepaliveDefaults(t *testing.T) {
	t.Parallel()
	cfg := dialConfigOf()
	got, ok := cfg.keepaliveParams()
	want := keepalive.ClientParameters{Time: 30 * time.Second, Timeout: 20 * time.Second}
	if !ok || got != want {
		t.Errorf("default keepalive = %+v, %v; want %+v, true", got, ok, want)
	}

	custom := keepalive.ClientParameters{Time: 15 * time.Second, Timeout: 5 * time.Second, PermitWithoutStream: true}
	cfg = dialConfigOf(WithKeepalive(custom))
	if got, ok := cfg.keepaliveParams(); !ok || got != custom {
		t.Errorf("WithKeepalive: keepalive = %+v, %v; want %+v, true", got, ok, custom)
	}

	cfg = dialConfigOf(WithoutKeepalive())
	if _, ok := cfg.keepaliveParams(); ok {
		t.Error("WithoutKeepalive: the client still sends keepalive pings")
	}
	cfg = dialConfigOf(WithoutKeepalive(), WithKeepalive(custom))
	if got, ok := cfg.keepaliveParams(); !ok || got != custom {
		t.Errorf("WithoutKeepalive then WithKeepalive: keepalive = %+v, %v; want %+v, true", got, ok, custom)
	}
}

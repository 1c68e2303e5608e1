// Package testserver runs a real Parkway server for Go tests.
//
// Start launches `npm start --silent -- --listen 127.0.0.1:0 --data <tmpdir>` in the repository root
// (the nearest directory above the test's working directory whose package.json is named "parkway"),
// waits for the server's "listening" log line and returns the address it reports. When the
// environment variable PARKWAY_ADDR is set, Start returns it instead and launches nothing.
//
// For tests that need their own agents and a scripted model, StartMockModel launches
// `parkway mock-model` (an OpenAI-compatible server playing a script, reset over HTTP), and
// StartServer launches Parkway with a generated config file whose agents use that model; a Server can
// be stopped, killed and started again on the same data directory. These ignore PARKWAY_ADDR.
// LaunchMockModel and LaunchServer do the same for code without a testing.TB (the Example
// functions), which stops them itself.
package testserver

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// AddrEnv names the environment variable holding the address of an already-running server to use
// instead of launching one.
const AddrEnv = "PARKWAY_ADDR"

const (
	// readyTimeout bounds how long the server may take to log that it is listening.
	readyTimeout = 60 * time.Second
	// stopGrace is how long the server's process group has to exit after SIGTERM before SIGKILL.
	stopGrace = 5 * time.Second
)

// Start returns the address of a Parkway server for t: the value of PARKWAY_ADDR when set, otherwise
// a freshly launched server with its own empty data directory. The launched server runs in its own
// process group, which is terminated when t finishes (SIGTERM, then SIGKILL after 5 seconds).
// Start fails t, including the server's captured output, if the server exits or does not log
// "listening" within 60 seconds.
func Start(t testing.TB) string {
	t.Helper()
	if addr := os.Getenv(AddrEnv); addr != "" {
		return addr
	}
	root, err := RepoRoot()
	if err != nil {
		t.Fatalf("testserver: %v", err)
	}
	// Created before the stop cleanup is registered, so it is removed only after the server is gone.
	dataDir := t.TempDir()
	out := &output{}
	p, line, err := startProcess(root, out, "npm", "start", "--silent", "--", "--listen", "127.0.0.1:0", "--data", dataDir)
	if err != nil {
		t.Fatalf("testserver: %v; output:\n%s", err, out.String())
	}
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			t.Logf("testserver: server output:\n%s", out.String())
		}
	})
	addr, _ := line["address"].(string)
	if addr == "" {
		t.Fatalf("testserver: the listening line has no address; output:\n%s", out.String())
	}
	return addr
}

// NewConn returns a plaintext client connection to addr, closed when t finishes; like
// grpc.NewClient, it connects on the first call.
func NewConn(t testing.TB, addr string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatalf("testserver: a client for %s: %v", addr, err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// RepoRoot returns the nearest directory at or above the working directory that holds a package.json
// whose "name" is "parkway".
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if isParkwayRoot(dir) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New(`no package.json named "parkway" above the working directory; set ` + AddrEnv + " to use a running server")
		}
		dir = parent
	}
}

func isParkwayRoot(dir string) bool {
	data, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return false
	}
	var pkg struct {
		Name string `json:"name"`
	}
	return json.Unmarshal(data, &pkg) == nil && pkg.Name == "parkway"
}

// Package testserver runs a real Parkway server for Go tests.
//
// Start launches `npm start --silent -- --listen 127.0.0.1:0 --data <tmpdir>` in the repository root
// (the nearest directory above the test's working directory whose package.json is named "parkway"),
// waits for the server's "listening" log line and returns the address it reports. When the
// environment variable PARKWAY_ADDR is set, Start returns it instead and launches nothing.
package testserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
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

	cmd := exec.Command("npm", "start", "--silent", "--", "--listen", "127.0.0.1:0", "--data", dataDir)
	cmd.Dir = root
	newProcessGroup(cmd)
	out := &output{}
	cmd.Stderr = out
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("testserver: %v", err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("testserver: starting %q in %s: %v", cmd.String(), root, err)
	}

	ready := make(chan string, 1)
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		scanStdout(stdout, out, ready)
	}()
	exited := make(chan error, 1)
	go func() {
		// os/exec closes stdout in Wait, so Wait runs only once stdout has been read to the end.
		<-readDone
		exited <- cmd.Wait()
		close(exited)
	}()

	listening := false
	t.Cleanup(func() {
		stopProcessGroup(cmd.Process, exited)
		// A failure before listening already carries the output.
		if listening && t.Failed() {
			t.Logf("testserver: server output:\n%s", out.String())
		}
	})

	select {
	case addr := <-ready:
		listening = true
		return addr
	case err := <-exited:
		t.Fatalf("testserver: server exited before listening (%v); output:\n%s", err, out.String())
	case <-time.After(readyTimeout):
		t.Fatalf("testserver: server did not log \"listening\" within %s; output:\n%s", readyTimeout, out.String())
	}
	return ""
}

// Dial returns a plaintext client connection to addr, closed when t finishes.
func Dial(t testing.TB, addr string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatalf("testserver: dialing %s: %v", addr, err)
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

// scanStdout copies every line of r into out and sends the address of the first JSON log line with
// msg "listening" on ready. It reads r to the end so the server never blocks on a full pipe.
func scanStdout(r io.Reader, out *output, ready chan<- string) {
	br := bufio.NewReader(r)
	found := false
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			_, _ = out.Write(line)
			if !found {
				if addr, ok := listeningAddr(line); ok {
					found = true
					ready <- addr
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// listeningAddr reports the address of a pino log line {"msg":"listening","address":"HOST:PORT",...}.
func listeningAddr(line []byte) (string, bool) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return "", false
	}
	var entry struct {
		Msg     string `json:"msg"`
		Address string `json:"address"`
	}
	if json.Unmarshal(line, &entry) != nil || entry.Msg != "listening" || entry.Address == "" {
		return "", false
	}
	return entry.Address, true
}

// output is a goroutine-safe buffer of everything the server wrote.
type output struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

package testserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// process is a child process group that announced itself with a JSON log line {"msg":"listening"}.
type process struct {
	cmd      *exec.Cmd
	exited   chan error // yields the Wait result, then is closed
	stopOnce sync.Once
}

// startProcess runs name with args in dir as the leader of a new process group, copies its stdout
// and stderr into out, and waits for the first JSON line on stdout whose msg is "listening"; it
// returns that line decoded. It fails when the process exits first or stays silent for readyTimeout.
func startProcess(dir string, out *output, name string, args ...string) (*process, map[string]any, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = childEnv()
	newProcessGroup(cmd)
	cmd.Stderr = out
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("starting %q in %s: %w", cmd.String(), dir, err)
	}
	p := &process{cmd: cmd, exited: make(chan error, 1)}
	ready := make(chan map[string]any, 1)
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		scanStdout(stdout, out, ready)
	}()
	go func() {
		// os/exec closes stdout in Wait, so Wait runs only once stdout has been read to the end.
		<-readDone
		p.exited <- cmd.Wait()
		close(p.exited)
	}()
	select {
	case line := <-ready:
		return p, line, nil
	case err := <-p.exited:
		return nil, nil, fmt.Errorf("%q exited before listening (%v)", cmd.String(), err)
	case <-time.After(readyTimeout):
		p.stop()
		return nil, nil, fmt.Errorf("%q did not log \"listening\" within %s", cmd.String(), readyTimeout)
	}
}

// stop sends SIGTERM to the process group, then SIGKILL after stopGrace, and waits for the leader.
func (p *process) stop() {
	p.stopOnce.Do(func() { stopProcessGroup(p.cmd.Process, p.exited) })
}

// kill sends SIGKILL to the whole process group at once and waits for the leader.
func (p *process) kill() {
	p.stopOnce.Do(func() { killProcessGroup(p.cmd.Process, p.exited) })
}

// childEnv is the test's environment without the PARKWAY_* variables that would override the
// configuration the tests write (model URL, listen address, data directory, database, config file, TLS).
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "PARKWAY_CONFIG", "PARKWAY_LISTEN", "PARKWAY_DATA", "PARKWAY_MODEL_URL", "PARKWAY_MODEL", "PARKWAY_MODEL_API_KEY",
			"PARKWAY_TLS_CERT", "PARKWAY_TLS_KEY", "PARKWAY_TLS_CLIENT_CA", "PARKWAY_DATABASE_URL", "PARKWAY_NODE_ID":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// scanStdout copies every line of r into out and sends the first JSON log line with msg "listening"
// on ready. It reads r to the end so the process never blocks on a full pipe.
func scanStdout(r io.Reader, out *output, ready chan<- map[string]any) {
	br := bufio.NewReader(r)
	found := false
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			_, _ = out.Write(line)
			if !found {
				if entry, ok := listeningLine(line); ok {
					found = true
					ready <- entry
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// listeningLine decodes a pino log line {"msg":"listening",...}.
func listeningLine(line []byte) (map[string]any, bool) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return nil, false
	}
	var entry map[string]any
	if json.Unmarshal(line, &entry) != nil || entry["msg"] != "listening" {
		return nil, false
	}
	return entry, true
}

// output is a goroutine-safe buffer of everything the processes wrote.
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
